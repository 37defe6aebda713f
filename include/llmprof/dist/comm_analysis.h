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
#include "llmprof/rundir/summary_context.h"

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
// offset is interpolated linearly between them: the drift, when it exceeds its uncertainty; below
// it the start offset holds throughout).
struct RankClock {
  int64_t rank = 0;
  ClockEstimate start;
  std::optional<ClockEstimate> end;
  // Null without an end estimate, or when it does not exceed its uncertainty (below resolution).
  std::optional<double> drift_ns_per_s() const;
  // (start residual + end residual) / the seconds between the estimates; null without an end one.
  std::optional<double> drift_uncertainty_ns_per_s() const;
  int64_t to_rank0(int64_t local_ns) const;  // local_ns - offset at that time
  rundir::ClockRow row() const;
};

// Everything the analysis reads: the ranks' comm.csv and phases.csv rows (their own clocks) and
// their clocks (rank 0's own: offset 0). clocks[r] is rank r's; world_size = clocks.size().
struct CommInput {
  std::vector<RankClock> clocks;
  std::vector<rundir::CommRow> comm;
  std::vector<rundir::PhaseSpanRow> spans;
};

// The straggler and the run's figures are summary.json's distributed.comm, defined with it in
// rundir (the one struct its writer and reader use).
using Straggler = rundir::CommStraggler;
using CommSummary = rundir::CommFigures;

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
