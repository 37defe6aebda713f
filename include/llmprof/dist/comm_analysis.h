// The communication analysis of a data-parallel run, after it: every rank's records put on rank
// 0's clock, then per collective its latency (the shortest duration across ranks, TraceLens),
// each rank's wait (latest launch - its own), algorithm and bus bandwidth (nccl-tests); per step
// and rank the temporal breakdown (compute / exposed communication / other / idle, as Holistic
// Trace Analysis) and the overlap of communication with compute; the straggler (the rank that
// launches all-reduces last most often), its lag and the phase its extra time is in. Pure
// functions over plain records (rundir/comm_tables.h): torch-free, unit-tested on hand-built
// timelines.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "llmprof/rundir/comm_tables.h"

namespace llmprof::dist {

// One round trip of the clock ping-pong: rank 0 stamps t0 (its clock) and sends, the peer stamps
// peer_ns (its clock) on receipt and answers at once, rank 0 stamps t3 on the answer.
struct PingSample {
  int64_t t0_ns = 0, peer_ns = 0, t3_ns = 0;
};

// A clock offset estimate (NTP's): from the round with the shortest round trip,
// offset = peer - (t0 + t3) / 2 (peer clock - rank 0's clock), residual = (t3 - t0) / 2, the most
// the true offset can differ from it whatever the split of the round trip.
struct ClockEstimate {
  int64_t at_ns = 0;  // rank 0's clock at the chosen round's midpoint
  int64_t offset_ns = 0;
  int64_t residual_ns = 0;
  int64_t rounds = 0;
};
// Throws std::invalid_argument on no samples.
ClockEstimate estimate_clock(const std::vector<PingSample>& samples);

// One rank's clock against rank 0's: the start estimate, and the end one when measured (then the
// offset is interpolated linearly between them: the drift).
struct RankClock {
  int64_t rank = 0;
  ClockEstimate start;
  std::optional<ClockEstimate> end;
  std::optional<double> drift_ns_per_s() const;  // null without an end estimate
  int64_t to_rank0(int64_t local_ns) const;      // local_ns - offset at that time
  rundir::ClockRow row() const;
};

// Everything the analysis reads: the ranks' comm.csv and phases.csv rows (their own clocks) and
// their clocks (rank 0's own: offset 0). clocks[r] is rank r's; world_size = clocks.size().
struct CommInput {
  std::vector<RankClock> clocks;
  std::vector<rundir::CommRow> comm;
  std::vector<rundir::PhaseSpanRow> spans;
};

// The rank that launched the all-reduces last most often (steps after the first layout when there
// are any), aligned clock. lag_ms: the median over collectives of its launch minus the median
// launch of the other ranks. phase: the phase (compute part: backward without its wait) in which
// its time exceeds the other ranks' most, by the median over steps of the excess (null when no
// phase of it is longer).
struct Straggler {
  int64_t rank = 0;
  int64_t last_count = 0, collectives = 0;
  double lag_ms = 0;
  std::optional<rundir::SpanPhase> phase;
  double phase_excess_ms = 0;
};

// Figures over the steps after the first layout (all steps when there are no others).
struct CommSummary {
  int64_t steps = 0, world_size = 0;
  std::optional<double> step_ms_median, exposed_comm_ms_median, exposed_share;  // share of step
  std::optional<double> comm_ms_median, overlap;  // overlap: sum hidden / sum comm
  std::optional<double> latency_ms_median, wait_ms_median, algbw_gb_per_s_median,
      busbw_gb_per_s_median;
  std::optional<Straggler> straggler;  // null for one rank or no collectives
  std::optional<double> clock_residual_us_max, clock_drift_ns_per_s_max;  // drift: max |drift|
};

struct CommAnalysis {
  std::vector<rundir::ClockRow> clocks;
  std::vector<rundir::CollectiveRow> collectives;  // by step, bucket, rank
  std::vector<rundir::CommStepRow> steps;          // by step, rank
  CommSummary summary;
};

// The whole analysis. Records of a rank without a clock are ignored; a collective some rank
// lacks (a killed rank) is analysed over the ranks that have it.
CommAnalysis analyse_comm(const CommInput& input);

// The temporal breakdown of one step on one rank (its own clock), exposed for tests: spans are the
// step's phase spans, comm its buckets' rows. See rundir::CommStepRow.
rundir::CommStepRow step_breakdown(const std::vector<rundir::PhaseSpanRow>& spans,
                                   const std::vector<rundir::CommRow>& comm);

}  // namespace llmprof::dist
