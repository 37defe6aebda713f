// tried.json through rundir::TriedDoc: report::TriedSet (ab's enums and comparison) converted to
// and from the document's entries, and the one line a report prints for each.
#include "llmprof/report/tried.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "llmprof/report/document.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/tried_doc.h"

namespace llmprof::report {

namespace {

rundir::TriedEntry to_entry(const TriedSet& t) {
  rundir::TriedEntry e;
  e.set = t.set;
  e.rules = t.rules;
  e.figure = ab::figure_name(t.figure);
  e.steps = t.steps;
  e.baseline = t.baseline;
  e.candidate = t.candidate;
  e.error = t.error;
  e.time = t.time;
  e.command = t.command;
  e.world_size = t.world_size;
  e.launcher = t.launcher;
  if (const auto& c = t.comparison) {
    rundir::TriedComparison& to = e.comparison.emplace();
    to.verdict = ab::verdict_name(c->verdict);
    to.pairs = c->pairs;
    to.baseline_median = c->baseline_median;
    to.candidate_median = c->candidate_median;
    to.ratio_of_medians = c->ratio_of_medians;
    to.median_paired_ratio = c->median_paired_ratio;
    to.confidence = c->confidence;
    if (c->interval) {
      to.ci_low = c->interval->low;
      to.ci_high = c->interval->high;
    }
  }
  return e;
}

// Entry i of the file at path; a figure or verdict ab does not know is a DataError naming them.
TriedSet from_entry(const rundir::TriedEntry& e, const std::string& path, size_t i) {
  const std::string field = fmt::format("tried.{}.", i);
  TriedSet t{
      e.set,        e.rules,    rundir::parse_name<ab::Figure>(e.figure, path, field + "figure"),
      e.steps,      e.baseline, e.candidate,
      std::nullopt, e.error,    e.time,
      e.command};
  t.world_size = e.world_size.value_or(1);  // before the field, every trial was one process
  t.launcher = e.launcher.empty() ? "none" : e.launcher;
  if (const auto& c = e.comparison) {
    ab::Comparison out;
    out.verdict = rundir::parse_name<ab::Verdict>(c->verdict, path, field + "verdict");
    out.pairs = c->pairs;
    out.baseline_median = c->baseline_median;
    out.candidate_median = c->candidate_median;
    out.ratio_of_medians = c->ratio_of_medians;
    out.median_paired_ratio = c->median_paired_ratio;
    out.confidence = c->confidence;
    if (c->ci_low && c->ci_high)
      out.interval = ab::Interval{*c->ci_low, *c->ci_high, c->confidence};
    t.comparison = out;
  }
  return t;
}

// tried.json of run_dir, or an empty document when there is none.
rundir::TriedDoc read_doc(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return rundir::parse_tried_doc(text.str(), path);
}

// "time per token" and the like: what the figure measures, in words.
std::string figure_words(ab::Figure f) {
  switch (f) {
    case ab::Figure::kMedianStepMs:
      return "median step time";
    case ab::Figure::kStepUsPerToken:
      return "step time per token";
    case ab::Figure::kEnergyJPerToken:
      return "energy per token";
    case ab::Figure::kWallUsPerToken:
      break;
  }
  return "wall time (steps + evals) per token";
}

std::string x(double v) { return format_number(v, 3) + "x"; }

std::string ranks_words(int64_t n) { return n == 1 ? "one process" : fmt::format("{} ranks", n); }

// An entry measured at another world size than the run's, as a report shows it: not measured,
// saying what was dropped and how to measure it again.
TriedSet dropped(TriedSet t, int64_t run_world_size, const std::string& run_dir) {
  const std::string what =
      t.comparison ? fmt::format("a verdict ({})", ab::verdict_name(t.comparison->verdict))
                   : std::string("an attempt");
  t.error = fmt::format(
      "{} measured with {} for this run of {} is dropped; `llmprof report --try {}` measures it "
      "with {}",
      what, ranks_words(t.world_size), ranks_words(run_world_size), run_dir,
      ranks_words(run_world_size));
  t.comparison.reset();
  t.baseline.clear();
  t.candidate.clear();
  return t;
}

}  // namespace

int64_t run_world_size(const std::string& run_dir) {
  std::vector<rundir::InputWarning> warnings;
  const auto s = rundir::read_summary(rundir::path(run_dir, rundir::kSummary), warnings);
  if (!s || !s->distributed) return 1;
  return std::max<int64_t>(s->distributed->world_size, 1);
}

std::vector<TriedSet> read_tried(const std::string& run_dir) {
  const std::string path = rundir::path(run_dir, rundir::kTried);
  const rundir::TriedDoc doc = read_doc(path);
  if (doc.tried.empty()) return {};
  const int64_t world = run_world_size(run_dir);
  std::vector<TriedSet> out;
  for (size_t i = 0; i < doc.tried.size(); ++i) {
    TriedSet t = from_entry(doc.tried[i], path, i);
    out.push_back(t.world_size == world ? std::move(t) : dropped(std::move(t), world, run_dir));
  }
  return out;
}

void write_tried(const std::string& run_dir, const std::vector<TriedSet>& fresh) {
  const std::string path = rundir::path(run_dir, rundir::kTried);
  rundir::TriedDoc doc = read_doc(path);
  const int64_t world = doc.tried.empty() ? 1 : run_world_size(run_dir);
  std::vector<rundir::TriedEntry> kept;
  for (rundir::TriedEntry& e : doc.tried) {
    bool replaced = e.world_size.value_or(1) != world;  // measured at another world size: goes
    for (const auto& f : fresh) {
      replaced = replaced || (f.set == e.set && ab::figure_name(f.figure) == e.figure);
    }
    if (!replaced) kept.push_back(std::move(e));
  }
  for (const auto& t : fresh) kept.push_back(to_entry(t));
  doc.tried = std::move(kept);
  rundir::write_tried_doc(path, doc);
}

std::string tried_text(const TriedSet& t) {
  if (!t.comparison) return "tried: not measured: " + t.error;
  const ab::Comparison& c = *t.comparison;
  const double r = c.median_paired_ratio;  // candidate / baseline time, the interval's median
  const std::string how =
      fmt::format("{} repetitions of {} steps each, {}{}", c.pairs, t.steps, figure_words(t.figure),
                  t.world_size > 1 ? fmt::format(", {} ranks", t.world_size) : std::string());
  if (!c.interval) {
    return fmt::format("tried: inconclusive ({} the time; too few repetitions for an interval; {})",
                       x(r), how);
  }
  const std::string pct = fmt::format("{:.3g}", c.confidence * 100);  // achieved: 96.9 at 6 pairs
  const ab::Interval& ci = *c.interval;
  switch (c.verdict) {
    case ab::Verdict::kFaster:
      return fmt::format("tried: {} faster ({}% CI {} to {}; {})", x(1 / r), pct, x(1 / ci.high),
                         x(1 / ci.low), how);
    case ab::Verdict::kSlower:
      return fmt::format("tried: slower, not advised ({} slower, {}% CI {} to {}; {})", x(r), pct,
                         x(ci.low), x(ci.high), how);
    case ab::Verdict::kInconclusive:
      break;
  }
  return fmt::format("tried: inconclusive ({} the time; the {}% CI {} to {} spans no change; {})",
                     x(r), pct, x(ci.low), x(ci.high), how);
}

}  // namespace llmprof::report
