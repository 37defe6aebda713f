// `llmprof tune`: the fastest configuration that fits, found by measuring. The library call
// behind the CLI (a sweep can call it per point): plans the space (llmprof/tune/space.h), skips
// what the planner says does not fit, races the rest against the starting config
// (llmprof/tune/search.h) through short `llmprof train` repetitions, and writes the tune
// directory: tune.json (rundir::TuneDoc), tuned.yaml (the winner, ready for `llmprof train`),
// tune.md and tune.html (the table) and tune.svg (the chart). Never prints: progress goes to the
// callback.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/rundir/tune_doc.h"
#include "llmprof/tune/search.h"

namespace llmprof::tune {

inline constexpr int64_t kDefaultTuneSteps = 30;  // a repetition's steps, unless fewer configured
inline constexpr int64_t kMeasuredStepsAtLeast = 3;    // steps after the warm-up, at least
inline constexpr double kDefaultLossTolerance = 0.01;  // relative, at loss@steps
inline constexpr double kDefaultBudget_s = 20 * 60;

struct TuneOptions {
  std::string config_path;
  std::vector<std::string> sets;           // --set, for every candidate and in tuned.yaml
  std::string objective = "tokens_per_s";  // tokens_per_s | step_ms | energy_per_token
  double budget_s = kDefaultBudget_s;
  std::vector<std::string> space;  // --space KEY=V1,V2; empty: generated
  bool keep_numerics = false;
  double loss_tolerance = kDefaultLossTolerance;
  std::optional<int64_t> steps;  // schedule.max_steps of a repetition
  std::string device;            // the planner's device; "": the config's (cpu: this machine)
  int64_t nproc = 1;             // rank processes per repetition (train --nproc)
  std::string out_dir;           // "": <output.dir>/tune-<config stem>
  std::string executable;        // the llmprof the repetitions run
  bool plan_only = false;        // plan the candidates, measure nothing
  SearchOptions search;
};

// Parses a budget: "90s", "20m", "1h", "1h30m", or plain seconds. Throws UsageError naming it.
double parse_budget_s(const std::string& text);

// The tune directory a search writes (options.out_dir, or the default).
std::string tune_dir(const TuneOptions& options);

// Plans the search: its inputs, knobs and candidates, each with the planner's verdict
// (does_not_fit ones never run). Throws UsageError / ConfigError (exit 2) for bad input: an
// unknown knob, a value outside a key's domain, an objective it cannot measure (energy_per_token
// without an energy source, naming the sources tried, or with nproc > 1), a space with nothing
// that fits.
rundir::TuneDoc plan_search(const TuneOptions& options);

// Plans, resumes what tune_dir holds for the same inputs (or refuses other inputs), searches and
// writes the tune directory. Returns the final document.
rundir::TuneDoc run_tune(const TuneOptions& options, const OnProgress& on_progress = {});

// tune.md: the conclusion, the planner's check and one row per candidate.
std::string tune_table_markdown(const rundir::TuneDoc& doc);

// tune.svg: each candidate's speed relative to the start (with its interval) against its planned
// peak memory, the start's level dashed, the winner marked; candidates not measured on the axis.
std::string tune_chart_svg(const rundir::TuneDoc& doc);

// tune.html: the conclusion, the planner's check, the chart and the table.
std::string tune_html(const rundir::TuneDoc& doc);

// "1.62x tokens/s [1.55, 1.70]" (objective tokens_per_s: the start's figure over the
// candidate's), or "0.62x step_ms [...]", "0.80x J/token [...]"; "" when not measured.
std::string speed_text(const rundir::TuneDoc& doc, const rundir::TuneCandidate& c);

}  // namespace llmprof::tune
