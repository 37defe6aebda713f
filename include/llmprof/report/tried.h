// tried.json in a run directory: the measured effect of each --set that the run's findings
// suggested, as `llmprof report --try RUN` found it by an A/B of short trainings (llmprof/ab);
// written and read through rundir::TriedDoc (llmprof/rundir/tried_doc.h, docs/tried.md).
// Written whole (temp + rename) and read back by every later report of the run, so a finding keeps
// its "tried: ..." in Markdown, CSV, JSON and HTML.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/ab/stats.h"
#include "llmprof/ab/train_trial.h"

namespace llmprof::report {

// One --set tried against the run's own config.
struct TriedSet {
  std::string set;                 // key=value, as the finding's suggestion names it
  std::vector<std::string> rules;  // the findings that suggested it
  ab::Figure figure = ab::Figure::kStepUsPerToken;
  int64_t steps = 0;                         // schedule.max_steps of each repetition
  std::vector<double> baseline, candidate;   // each round's figure, per arm
  std::optional<ab::Comparison> comparison;  // nullopt when it could not be measured
  std::string error;    // why it could not be measured (train refused the value ...); else ""
  std::string time;     // when it was tried (local time, ISO 8601)
  std::string command;  // the command that tried it
  // The rank processes each arm trained and how they were started: "none" (one process),
  // "nproc" (`llmprof train --nproc N` here), or, not measured, the run's launcher that a trial
  // cannot start here ("slurm"). An entry from before these fields: 1, "none".
  int64_t world_size = 1;
  std::string launcher = "none";
};

// The world size of a run directory: its summary.json distributed.world_size; 1 without one.
// Throws DataError for a malformed summary.json.
int64_t run_world_size(const std::string& run_dir);

// tried.json of a run directory (rundir::kTried, rundir::TriedDoc); empty when absent. A verdict
// measured at another world size than the run's (one process for a data-parallel run) is
// dropped: its entry comes back not measured, its error saying so. Throws DataError naming the
// file and the field for invalid JSON, a missing or mistyped field, a newer schema_version, or a
// figure or verdict this version does not know.
std::vector<TriedSet> read_tried(const std::string& run_dir);

// Rewrites tried.json (temp + rename): `fresh` replaces the entries of the same set and figure,
// the file's other entries stay as they are (their unknown fields too), but for verdicts measured
// at another world size than the run's, which go. Throws IoError, or DataError as read_tried for
// the file already there.
void write_tried(const std::string& run_dir, const std::vector<TriedSet>& fresh);

// One line: "tried: 1.49x faster (96.9% CI 1.41x to 1.58x; 6 repetitions of 20 steps, time per
// token)" (the median paired ratio, the confidence its interval achieves), "tried: slower, not
// advised (...)", "tried: inconclusive (... spans no change ...)" or "tried: not measured: <why>".
std::string tried_text(const TriedSet& t);

}  // namespace llmprof::report
