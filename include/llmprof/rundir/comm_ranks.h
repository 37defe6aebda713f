// Each rank's communication figures over the steady steps, and the straggler, defined once: the
// summary's distributed.comm.straggler (dist's analysis), the report's and the HTML page's "who
// launches last" table and the straggler finding all take them from here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "llmprof/rundir/comm_tables.h"

namespace llmprof::rundir {

// The steady-steps rule, written here only: the steps the communication figures are over are those
// after the first bucket layout (whose buckets differ from the later ones), every step when there
// are no others. Rows are any table's with `first_layout` (comm_steps.csv, collectives.csv).

// Whether any row is after the first bucket layout: then only those are steady.
template <typename Row>
bool after_first_layout(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    if (!r.first_layout) return true;
  }
  return false;
}

// The steady rows of `rows`, in their order, where `decided_by` (a table of the same run) decides
// whether there are rows after the first layout: the report filters collectives.csv by what
// comm_steps.csv says.
template <typename Row, typename By>
std::vector<const Row*> steady_steps(const std::vector<Row>& rows,
                                     const std::vector<By>& decided_by) {
  const bool later = after_first_layout(decided_by);
  std::vector<const Row*> out;
  for (const Row& r : rows) {
    if (!later || !r.first_layout) out.push_back(&r);
  }
  return out;
}

// The steady rows of `rows`, deciding by themselves.
template <typename Row>
std::vector<const Row*> steady_steps(const std::vector<Row>& rows) {
  return steady_steps(rows, rows);
}

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
