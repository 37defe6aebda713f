// One clock across ranks: rank 0 ping-pongs a small message with every other rank (point to
// point through the process group, many rounds) and keeps, per rank, the round with the shortest
// round trip (comm_analysis.h estimate_clock). Measured at the start of a run and again at its
// end, which gives the drift. Also the test-only settings that make the estimator and the
// straggler analysis checkable on one host, where all ranks share one clock.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "llmprof/dist/comm_analysis.h"

namespace llmprof::dist {

class ProcessGroup;

// Collective (every rank calls it; point to point with rank 0, bounded by the group's timeout).
// clock: this rank's clock (ns). On rank 0 returns one estimate per rank (rank 0's own: offset 0,
// residual 0); on the others an empty vector. rounds >= 1.
std::vector<ClockEstimate> measure_clocks(ProcessGroup& group,
                                          int rounds,
                                          const std::function<int64_t()>& clock);

// TEST ONLY. LLMPROF_TEST_CLOCK_SKEW_US="<rank>:<us>": that rank's clock reads <us> microseconds
// ahead (negative: behind) in everything llmprof records of a data-parallel run (bucket and
// phase times, the clock ping-pong), so the estimator has a known offset to recover. Read once
// per process; 0 for other ranks or when unset. A malformed value throws ConfigError naming it.
int64_t test_clock_skew_ns(int rank);

// TEST ONLY. LLMPROF_TEST_FORWARD_DELAY_MS="<rank>:<ms>": that rank sleeps <ms> milliseconds in
// every forward phase of a data-parallel run (an injected straggler). 0 otherwise; read once; a
// malformed value throws ConfigError naming it.
int64_t test_forward_delay_ns(int rank);

}  // namespace llmprof::dist
