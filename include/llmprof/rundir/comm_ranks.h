// Each rank's communication figures over the steady steps, and the straggler, defined once: the
// summary's distributed.comm.straggler (dist's analysis), the report's and the HTML page's "who
// launches last" table and the straggler finding all take them from here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "llmprof/rundir/comm_tables.h"

namespace llmprof::rundir {

// The steps the communication figures are over: those after the first bucket layout (whose
// buckets differ from the later ones), every step when there are no others.
std::vector<const CommStepRow*> steady_steps(const std::vector<CommStepRow>& steps);

// One rank's medians over the steady steps (comm_steps.csv).
struct CommRankFigures {
  int64_t rank = 0;
  int64_t steps = 0;
  std::optional<double> launched_last_share;  // its last launches / the buckets it launched
  std::optional<double> launch_lag_ms;  // median of (its launch - the earliest rank's), per step
  std::optional<double> data_ms, forward_ms, backward_compute_ms, optimizer_ms, step_ms;
};
// By rank.
std::vector<CommRankFigures> comm_rank_figures(const std::vector<CommStepRow>& steps);

// The straggler: the rank whose median launch lag over the steady steps is the largest (the one
// the others wait for at each all-reduce); nullopt with fewer than two ranks or no lag measured.
std::optional<int64_t> straggler_rank(const std::vector<CommRankFigures>& ranks);

}  // namespace llmprof::rundir
