// tried.json's one writer and one reader (include/llmprof/rundir/tried_doc.h). schema_version,
// tried and each entry's set, rules, figure, steps, baseline, candidate and verdict (with a
// verdict, the comparison's figures) are the fields every file has; world_size and launcher came
// later (absent: a trial of one process); unknown fields are kept.
#include "llmprof/rundir/tried_doc.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <type_traits>

#include "doc_tables.h"
#include "json_fields.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::JsonField;
using detail::JsonFields;
using detail::member;
using detail::ObjectReader;
using detail::Presence;

constexpr const char* kWhat =
    "llmprof report --try: each suggested --set as an A/B of short trainings against the run's "
    "own config";

// A figure of the comparison, written beside the entry's fields with a verdict (and then a
// field of the first version: required); a double null (not finite when written) reads as NaN.
template <typename M>
JsonField<TriedEntry> comparison_member(std::string key, M TriedComparison::*m) {
  return detail::converted<TriedEntry>(
      key, Presence::kOptional,
      [m](const TriedEntry& t) {
        return t.comparison ? detail::value_json((*t.comparison).*m) : detail::not_written();
      },
      [m](TriedEntry& t, ObjectReader& o, DocContext&, const std::string& key) {
        if (!t.comparison) return;
        o.require(key);
        if constexpr (std::is_same_v<M, double>) {
          (*t.comparison).*m = o.number(key).value_or(NAN);
        } else {
          detail::read_value(o, key, (*t.comparison).*m);
        }
      });
}

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
const JsonFields<TriedEntry>& entry_fields() {
  using C = TriedComparison;
  static const JsonFields<TriedEntry> f = {
      member("set", &TriedEntry::set, Presence::kRequired),
      member("rules", &TriedEntry::rules, Presence::kRequired),
      member("figure", &TriedEntry::figure, Presence::kRequired),
      member("steps", &TriedEntry::steps, Presence::kRequired),
      member("baseline", &TriedEntry::baseline, Presence::kRequired),
      member("candidate", &TriedEntry::candidate, Presence::kRequired),
      member("error", &TriedEntry::error), member("time", &TriedEntry::time),
      member("command", &TriedEntry::command), member("world_size", &TriedEntry::world_size),
      member("launcher", &TriedEntry::launcher),
      // null: not measured; with a verdict, the comparison's figures below are written.
      detail::converted<TriedEntry>(
          "verdict", Presence::kRequired,
          [](const TriedEntry& t) {
            return t.comparison ? Json(t.comparison->verdict) : Json(nullptr);
          },
          [](TriedEntry& t, ObjectReader& o, DocContext&, const std::string& key) {
            if (std::optional<std::string> verdict = o.text(key)) {
              t.comparison = TriedComparison{};
              t.comparison->verdict = std::move(*verdict);
            }
          }),
      comparison_member("pairs", &C::pairs),
      comparison_member("baseline_median", &C::baseline_median),
      comparison_member("candidate_median", &C::candidate_median),
      comparison_member("ratio_of_medians", &C::ratio_of_medians),
      comparison_member("median_paired_ratio", &C::median_paired_ratio),
      comparison_member("confidence", &C::confidence), comparison_member("ci_low", &C::ci_low),
      comparison_member("ci_high", &C::ci_high)};
  return f;
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

namespace detail {
const JsonFields<TriedDoc>& tried_doc_fields() {
  static const JsonFields<TriedDoc> f = {
      // A constant description, written again: read only to check it is text.
      converted<TriedDoc>(
          "what", Presence::kOptional, [](const TriedDoc&) { return Json(kWhat); },
          [](TriedDoc&, ObjectReader& o, DocContext&, const std::string& key) { o.text(key); }),
      // Each entry with its own unknown keys put back (the reader moves them to the entry).
      [] {
        JsonField<TriedDoc> tried =
            list("tried", &TriedDoc::tried, entry_fields(), Presence::kRequired);
        tried.write = [](const TriedDoc& d) {
          Json a = Json::array();
          for (const TriedEntry& t : d.tried) {
            Json j = write_object(t, entry_fields());
            put_unknown(j, t.unknown);
            a.push_back(std::move(j));
          }
          return a;
        };
        return tried;
      }()};
  return f;
}
}  // namespace detail

std::string tried_doc_text(const TriedDoc& d) {
  return detail::write_doc(d, kTriedSchemaVersion, detail::tried_doc_fields()).dump(2) + "\n";
}

void write_tried_doc(const std::string& path, const TriedDoc& d) {
  output::write_file_atomic(path, tried_doc_text(d));
}

TriedDoc parse_tried_doc(const std::string& text, const std::string& file) {
  TriedDoc d =
      detail::read_doc<TriedDoc>(text, file, kTriedSchemaVersion, detail::tried_doc_fields());
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
