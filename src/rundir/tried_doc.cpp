// tried.json's one writer and one reader (include/llmprof/rundir/tried_doc.h). schema_version,
// tried and each entry's set, rules, figure, steps, baseline, candidate and verdict (with a
// verdict, the comparison's figures) are the fields every file has; world_size and launcher came
// later (absent: a trial of one process); unknown fields are kept.
#include "llmprof/rundir/tried_doc.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "doc_lists.h"
#include "json_doc.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::object_list;
using detail::ObjectReader;
using detail::opt;
using detail::value_list;

constexpr const char* kWhat =
    "llmprof report --try: each suggested --set as an A/B of short trainings against the run's "
    "own config";

Json entry_json(const TriedEntry& t) {
  Json j = {{"set", t.set},
            {"rules", t.rules},
            {"figure", t.figure},
            {"steps", t.steps},
            {"baseline", t.baseline},
            {"candidate", t.candidate},
            {"error", t.error},
            {"time", t.time},
            {"command", t.command},
            {"verdict", nullptr},
            {"world_size", opt(t.world_size)},
            {"launcher", t.launcher}};
  if (const auto& c = t.comparison) {
    j["verdict"] = c->verdict;
    j["pairs"] = c->pairs;
    j["baseline_median"] = c->baseline_median;
    j["candidate_median"] = c->candidate_median;
    j["ratio_of_medians"] = c->ratio_of_medians;
    j["median_paired_ratio"] = c->median_paired_ratio;
    j["confidence"] = c->confidence;
    j["ci_low"] = opt(c->ci_low);
    j["ci_high"] = opt(c->ci_high);
  }
  detail::put_unknown(j, t.unknown);
  return j;
}

// A figure of the comparison: present (first version); null (not finite when written) is NaN.
double comparison_figure(ObjectReader& o, const std::string& key) {
  o.require(key);
  return o.number(key).value_or(NAN);
}

TriedComparison read_comparison(ObjectReader& o, std::string verdict) {
  TriedComparison c;
  c.verdict = std::move(verdict);
  o.require("pairs");
  c.pairs = o.integer("pairs").value_or(0);
  c.baseline_median = comparison_figure(o, "baseline_median");
  c.candidate_median = comparison_figure(o, "candidate_median");
  c.ratio_of_medians = comparison_figure(o, "ratio_of_medians");
  c.median_paired_ratio = comparison_figure(o, "median_paired_ratio");
  c.confidence = comparison_figure(o, "confidence");
  o.require("ci_low");
  o.require("ci_high");
  c.ci_low = o.number("ci_low");
  c.ci_high = o.number("ci_high");
  return c;
}

TriedEntry read_tried_entry(ObjectReader& o) {
  for (const char* key : {"set", "rules", "figure", "steps", "baseline", "candidate", "verdict"}) {
    o.require(key);
  }
  TriedEntry t;
  t.set = o.text("set").value_or("");
  t.rules = value_list<std::string>(o, "rules");
  t.figure = o.text("figure").value_or("");
  t.steps = o.integer("steps").value_or(0);
  t.baseline = value_list<double>(o, "baseline");
  t.candidate = value_list<double>(o, "candidate");
  t.error = o.text("error").value_or("");
  t.time = o.text("time").value_or("");
  t.command = o.text("command").value_or("");
  t.world_size = o.integer("world_size");
  t.launcher = o.text("launcher").value_or("");
  if (std::optional<std::string> verdict = o.text("verdict")) {
    t.comparison = read_comparison(o, std::move(*verdict));
  }
  return t;
}

// Moves each "/tried/<i>/..." of the document's unknown fields to entry i's own.
void unknown_to_entries(TriedDoc& d) {
  for (auto it = d.unknown.begin(); it != d.unknown.end();) {
    size_t i = 0, end = 0;
    if (it->first.rfind("/tried/", 0) == 0 &&
        std::sscanf(it->first.c_str(), "/tried/%zu%zn", &i, &end) == 1 && i < d.tried.size()) {
      d.tried[i].unknown[it->first.substr(end)] = it->second;
      it = d.unknown.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

std::string tried_doc_text(const TriedDoc& d) {
  Json tried = Json::array();
  for (const TriedEntry& t : d.tried) tried.push_back(entry_json(t));
  Json j = {{"schema_version", kTriedSchemaVersion}, {"what", kWhat}, {"tried", std::move(tried)}};
  detail::put_unknown(j, d.unknown);
  return j.dump(2) + "\n";
}

void write_tried_doc(const std::string& path, const TriedDoc& d) {
  output::write_file_atomic(path, tried_doc_text(d));
}

TriedDoc parse_tried_doc(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  TriedDoc d;
  detail::DocContext ctx{file, &d.unknown, nullptr};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kTriedSchemaVersion);
  doc.text("what");  // a constant description, written again
  doc.require("tried");
  d.tried = object_list<TriedEntry>(doc, ctx, "tried", read_tried_entry);
  doc.keep_unknown();
  unknown_to_entries(d);
  return d;
}

std::string tried_doc_fields_doc() {
  TriedDoc d;
  TriedEntry t;
  t.rules = {"rule"};
  t.baseline = t.candidate = {1.5};
  t.world_size = 2;
  t.comparison = TriedComparison{"faster", 3, 1.5, 1.5, 1.5, 1.5, 0.95, 1.5, 1.5};
  d.tried.push_back(t);
  const std::string heading = fmt::format(
      "# tried.json fields (schema_version {})\n\n"
      "Written into a run directory by `llmprof report --try`. Generated from `rundir::TriedDoc` "
      "(include/llmprof/rundir/tried_doc.h) through its writer; "
      "`tests/rundir/tried_doc_test.cpp` checks that this file matches. Keys are written in this "
      "(sorted) order. `verdict` is null when the --set could not be measured (`error` says "
      "why); the comparison's figures (`pairs` to `ci_high`) are written with a verdict, "
      "`ci_low`/`ci_high` null below six pairs (no 95% interval), `confidence` the one the "
      "order-statistic interval achieves. `world_size` is the number of rank processes each "
      "arm trained (a data-parallel run's trials train its world size: `llmprof train --nproc "
      "N`), `launcher` how they were started (`none`: one process, `nproc`; for a set not "
      "measured because a trial cannot start the run's ranks here, the run's launcher, e.g. "
      "`slurm`); an entry without them is from before these fields: one process. A report drops "
      "a verdict measured at another world size than the run's. Read: `schema_version`, `tried` "
      "and each entry's `set`, `rules`, `figure`, `steps`, `baseline`, `candidate` and `verdict` "
      "are required.\n\n",
      kTriedSchemaVersion);
  const Json none = Json::parse(tried_doc_text(TriedDoc{}));
  return detail::field_table_page(heading, Json::parse(tried_doc_text(d)), none);
}

}  // namespace llmprof::rundir
