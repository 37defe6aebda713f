// The communication analysis on hand-built timelines (times in ms x 1e6 ns, so every expected
// figure below is worked out by hand in ms).
#include "llmprof/dist/comm_analysis.h"

#include <gtest/gtest.h>

#include <cmath>

#include "llmprof/rundir/comm_ranks.h"

namespace llmprof::dist {
namespace {

using profile::Phase;
using rundir::CommRow;
using rundir::PhaseSpanRow;

constexpr int64_t kMs = 1000000;

PhaseSpanRow span(
    int64_t rank, int64_t step, Phase p, double start_ms, double end_ms, int64_t shift_ns = 0) {
  return {rank, step, p, std::llround(start_ms * kMs) + shift_ns,
          std::llround(end_ms * kMs) + shift_ns};
}

CommRow bucket(int64_t rank,
               int64_t step,
               int64_t b,
               double ready_ms,
               double launch_ms,
               double end_ms,
               int64_t bytes,
               int64_t shift_ns = 0) {
  CommRow c;
  c.rank = rank;
  c.step = step;
  c.bucket = b;
  c.bytes = bytes;
  c.elements = bytes / 4;
  c.dtype = "f32";
  c.first_layout = step == 1;
  c.ready_ns = std::llround(ready_ms * kMs) + shift_ns;
  c.launch_ns = std::llround(launch_ms * kMs) + shift_ns;
  c.end_ns = std::llround(end_ms * kMs) + shift_ns;
  return c;
}

void expect_sums_to_step(const rundir::CommStepRow& r) {
  EXPECT_NEAR(r.compute_ms + r.exposed_comm_ms + r.other_ms + r.idle_ms, r.step_ms, 1e-9);
}

// data [0,10) forward [10,40) backward [40,100) optimizer [105,125); buckets [60,80) and [90,98),
// the second handed over at 90 (backward's compute ends there). compute = 30 + 50 + 20 = 100;
// comm = 20 + 8 = 28, hidden under compute 20, exposed 8; other = data 10 + [98,100) 2 = 12;
// idle = the gap [100,105) = 5; 100 + 8 + 12 + 5 = 125 = the step.
TEST(StepBreakdown, SplitsTheStepIntoComputeExposedOtherAndIdle) {
  const std::vector<PhaseSpanRow> spans = {
      span(0, 2, Phase::kData, 0, 10), span(0, 2, Phase::kForward, 10, 40),
      span(0, 2, Phase::kBackward, 40, 100), span(0, 2, Phase::kOptimizer, 105, 125)};
  const std::vector<CommRow> comm = {bucket(0, 2, 0, 60, 60, 80, 1000),
                                     bucket(0, 2, 1, 90, 90, 98, 1000)};
  const rundir::CommStepRow r = step_breakdown(spans, comm);
  EXPECT_DOUBLE_EQ(r.step_ms, 125);
  EXPECT_DOUBLE_EQ(r.compute_ms, 100);
  EXPECT_DOUBLE_EQ(r.comm_ms, 28);
  EXPECT_DOUBLE_EQ(r.hidden_comm_ms, 20);
  EXPECT_DOUBLE_EQ(r.exposed_comm_ms, 8);
  EXPECT_DOUBLE_EQ(r.other_ms, 12);
  EXPECT_DOUBLE_EQ(r.idle_ms, 5);
  ASSERT_TRUE(r.overlap.has_value());
  EXPECT_NEAR(*r.overlap, 20.0 / 28.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.backward_ms, 60);
  EXPECT_DOUBLE_EQ(r.backward_compute_ms, 50);
  EXPECT_EQ(r.buckets, 2);
  expect_sums_to_step(r);
}

// Overlap off: both buckets launched after backward's compute (last handed over at 90): nothing
// hidden, exposed = all communication = [90,99) = 9.
TEST(StepBreakdown, AllCommunicationIsExposedWhenLaunchedAfterCompute) {
  const std::vector<PhaseSpanRow> spans = {
      span(0, 2, Phase::kData, 0, 10), span(0, 2, Phase::kForward, 10, 40),
      span(0, 2, Phase::kBackward, 40, 100), span(0, 2, Phase::kOptimizer, 100, 120)};
  const std::vector<CommRow> comm = {bucket(0, 2, 0, 60, 90, 95, 1000),
                                     bucket(0, 2, 1, 90, 95, 99, 1000)};
  const rundir::CommStepRow r = step_breakdown(spans, comm);
  EXPECT_DOUBLE_EQ(r.comm_ms, 9);
  EXPECT_DOUBLE_EQ(r.exposed_comm_ms, 9);
  EXPECT_DOUBLE_EQ(*r.overlap, 0);
  EXPECT_DOUBLE_EQ(r.compute_ms, 30 + 50 + 20);
  EXPECT_DOUBLE_EQ(r.other_ms, 10 + 1);  // data, and [99,100) after the last all-reduce
  EXPECT_DOUBLE_EQ(r.idle_ms, 0);
  expect_sums_to_step(r);
}

// With accumulation the backward of the non-synchronising micro-step is all compute.
TEST(StepBreakdown, OnlyTheSynchronisingBackwardWaits) {
  const std::vector<PhaseSpanRow> spans = {
      span(0, 2, Phase::kData, 0, 5),       span(0, 2, Phase::kForward, 5, 15),
      span(0, 2, Phase::kBackward, 15, 35), span(0, 2, Phase::kData, 35, 40),
      span(0, 2, Phase::kForward, 40, 50),  span(0, 2, Phase::kBackward, 50, 80),
      span(0, 2, Phase::kOptimizer, 80, 90)};
  const std::vector<CommRow> comm = {bucket(0, 2, 0, 70, 70, 78, 1000)};
  const rundir::CommStepRow r = step_breakdown(spans, comm);
  EXPECT_DOUBLE_EQ(r.backward_compute_ms, 20 + 20);
  EXPECT_DOUBLE_EQ(r.compute_ms, 10 + 20 + 10 + 20 + 10);
  EXPECT_DOUBLE_EQ(r.exposed_comm_ms, 8);
  EXPECT_DOUBLE_EQ(r.other_ms, 5 + 5 + 2);
  expect_sums_to_step(r);
}

// The best round is the second (round trip 60): midpoint 2030, offset 6530 - 2030 = 4500.
TEST(EstimateClock, TakesTheRoundWithTheShortestRoundTrip) {
  const ClockEstimate e =
      estimate_clock({{1000, 5600, 1200}, {2000, 6530, 2060}, {3000, 7600, 3300}});
  EXPECT_EQ(e.offset_ns, 4500);
  EXPECT_EQ(e.residual_ns, 30);
  EXPECT_EQ(e.at_ns, 2030);
  EXPECT_EQ(e.rounds, 3);
  EXPECT_THROW(estimate_clock({}), std::invalid_argument);
}

// Offset 1000 ns at rank 0's 0 s, 1500 ns at its 1 s: drift 500 ns/s; at rank 0's 0.5 s the
// offset is 1250, so the local 500'001'250 is rank 0's 500'000'000.
TEST(RankClock, InterpolatesTheOffsetBetweenStartAndEnd) {
  RankClock c{1, {0, 1000, 10, 100}, ClockEstimate{1000000000, 1500, 12, 100}};
  ASSERT_TRUE(c.drift_ns_per_s().has_value());
  EXPECT_DOUBLE_EQ(*c.drift_ns_per_s(), 500);
  EXPECT_EQ(c.to_rank0(500001250), 500000000);
  RankClock fixed{1, {0, 1000, 10, 100}, std::nullopt};
  EXPECT_FALSE(fixed.drift_ns_per_s().has_value());
  EXPECT_EQ(fixed.to_rank0(5000), 4000);
  EXPECT_EQ(c.row().end_residual_ns, 12);
}

// The case on one host: the offset moved 6.6 us in 0.19 s with residuals of 38 and 40 us:
// 34,737 ns/s measured, within its uncertainty (78 us / 0.19 s = 410,526 ns/s): below
// resolution, so no drift is applied and the row says how small it is.
TEST(RankClock, DriftWithinItsUncertaintyIsBelowResolution) {
  RankClock c{1, {0, 1000, 38000, 200}, ClockEstimate{190000000, 7600, 40000, 200}};
  EXPECT_FALSE(c.drift_ns_per_s().has_value());
  ASSERT_TRUE(c.drift_uncertainty_ns_per_s().has_value());
  EXPECT_NEAR(*c.drift_uncertainty_ns_per_s(), 78000 / 0.19, 1e-6);
  EXPECT_EQ(c.to_rank0(100000000), 100000000 - 1000);  // the start offset throughout
  const rundir::ClockRow row = c.row();
  EXPECT_FALSE(row.drift_ns_per_s.has_value());
  EXPECT_NEAR(*row.drift_uncertainty_ns_per_s, 78000 / 0.19, 1e-6);
}

// Two ranks, rank 1's clock 1 s ahead, its forward 5 ms longer on steps 2 and 3 (step 1, the
// first layout, has rank 0 late and is left out of the summary). Per step, on rank 0's clock:
//   rank 0: forward [10,40) backward [40,100) buckets [60,80) [90,99) optimizer [100,120)
//   rank 1: forward [10,45) backward [45,105) buckets [65,80) [95,99) optimizer [105,125)
// Bucket 0: latency = min(20, 15) = 15 ms, 1.5 MB -> algbw 0.1 GB/s, busbw x 2(2-1)/2 = 0.1;
// rank 0 waits 5 ms. Rank 0: comm 29, hidden 20, exposed 9; rank 1: comm 19, hidden 15,
// exposed 4: median exposed 6.5, overlap (20 + 15) / (29 + 19). Straggler rank 1, lag 5 ms,
// in forward (excess 5; backward's compute is 50 on both).
CommInput two_ranks() {
  CommInput in;
  in.clocks.push_back({0, {0, 0, 0, 200}, std::nullopt});
  const int64_t skew = 1000 * kMs;
  in.clocks.push_back({1, {0, skew, 10000, 200}, std::nullopt});
  for (int64_t step = 1; step <= 3; ++step) {
    const double b = 200.0 * static_cast<double>(step);
    const double late0 = step == 1 ? 7 : 0, late1 = step == 1 ? 0 : 5;
    for (int64_t r = 0; r < 2; ++r) {
      const double d = r == 0 ? late0 : late1;
      const int64_t shift = r == 0 ? 0 : skew;
      in.spans.push_back(span(r, step, Phase::kData, b, b + 10, shift));
      in.spans.push_back(span(r, step, Phase::kForward, b + 10, b + 40 + d, shift));
      in.spans.push_back(span(r, step, Phase::kBackward, b + 40 + d, b + 100 + d, shift));
      in.spans.push_back(span(r, step, Phase::kOptimizer, b + 100 + d, b + 120 + d, shift));
      in.comm.push_back(bucket(r, step, 0, b + 60 + d, b + 60 + d, b + 80, 1500000, shift));
      in.comm.push_back(bucket(r, step, 1, b + 90 + d, b + 90 + d, b + 99, 400000, shift));
    }
  }
  return in;
}

TEST(AnalyseComm, PutsRanksOnOneClockAndComputesEachCollective) {
  const CommAnalysis a = analyse_comm(two_ranks());
  ASSERT_EQ(a.collectives.size(), 3u * 2 * 2);
  const rundir::CollectiveRow& r0 = a.collectives[4];  // step 2, bucket 0, rank 0
  const rundir::CollectiveRow& r1 = a.collectives[5];
  ASSERT_EQ(r0.step, 2);
  ASSERT_EQ(r0.bucket, 0);
  ASSERT_EQ(r1.rank, 1);
  EXPECT_EQ(r1.launch_aligned_ns, 465 * kMs);  // 400 + 65, the 1 s skew removed
  EXPECT_DOUBLE_EQ(*r0.latency_ms, 15);
  EXPECT_DOUBLE_EQ(*r0.duration_ms, 20);
  EXPECT_DOUBLE_EQ(*r0.wait_ms, 5);
  EXPECT_DOUBLE_EQ(*r1.wait_ms, 0);
  EXPECT_EQ(r0.last_rank, 1);
  EXPECT_NEAR(*r0.algbw_gb_per_s, 0.1, 1e-12);
  EXPECT_NEAR(*r0.busbw_gb_per_s, 0.1, 1e-12);
  EXPECT_NEAR(*a.collectives[7].latency_ms, 4, 1e-12);  // bucket 1: min(9, 4)
  ASSERT_EQ(a.clocks.size(), 2u);
  EXPECT_EQ(a.clocks[1].start_offset_ns, 1000 * kMs);
}

TEST(AnalyseComm, SummarisesExposedTimeOverlapAndTheStraggler) {
  const CommAnalysis a = analyse_comm(two_ranks());
  ASSERT_EQ(a.steps.size(), 6u);
  for (const auto& r : a.steps) expect_sums_to_step(r);
  const CommSummary& s = a.summary;
  EXPECT_EQ(s.steps, 2);
  EXPECT_DOUBLE_EQ(*s.exposed_comm_ms_median, 6.5);
  EXPECT_NEAR(*s.overlap, 35.0 / 48.0, 1e-12);
  EXPECT_NEAR(*s.busbw_gb_per_s_median, 0.1, 1e-12);
  EXPECT_NEAR(*s.latency_ms_median, (15.0 + 4.0) / 2, 1e-12);
  ASSERT_TRUE(s.straggler.has_value());
  EXPECT_EQ(s.straggler->rank, 1);
  EXPECT_EQ(s.straggler->last_count, 4);
  EXPECT_EQ(s.straggler->collectives, 4);
  EXPECT_NEAR(s.straggler->lag_ms, 5, 1e-9);
  ASSERT_TRUE(s.straggler->phase.has_value());
  EXPECT_EQ(*s.straggler->phase, Phase::kForward);
  EXPECT_NEAR(s.straggler->phase_excess_ms, 5, 1e-9);
  EXPECT_NEAR(*s.clock_residual_us_max, 10, 1e-12);
  const rundir::CommStepRow& rank1 = a.steps[3];  // step 2, rank 1
  ASSERT_EQ(rank1.rank, 1);
  EXPECT_DOUBLE_EQ(rank1.exposed_comm_ms, 4);
  EXPECT_DOUBLE_EQ(*rank1.launch_lag_ms, 5);
  EXPECT_EQ(rank1.last_launches, 2);
  EXPECT_EQ(rank1.start_aligned_ns, 400 * kMs);
}

// Step 2 of two_ranks, each rank on its own compute: rank 0's bucket 0 [460,480) lies inside its
// backward's autograd [440,490): hidden 20, exposed 0; its bucket 1 [490,499) starts when the
// autograd ends (last bucket handed over at 490) and ends before the optimizer (500): hidden 0,
// exposed 9. Rank 1 (5 ms late): bucket 0 [465,480) inside [445,495): 15 and 0; bucket 1
// [495,499): 0 and 4. Per rank the exposed parts add up to comm_steps' exposed (9, 4).
TEST(AnalyseComm, SplitsEachAllReduceIntoHiddenAndExposedOnItsRank) {
  const CommAnalysis a = analyse_comm(two_ranks());
  ASSERT_EQ(a.collectives.size(), 12u);
  const double hidden[] = {20, 15, 0, 0}, exposed[] = {0, 0, 9, 4};
  for (size_t i = 0; i < 4; ++i) {
    const rundir::CollectiveRow& c = a.collectives[4 + i];  // step 2: (bucket, rank) in order
    ASSERT_EQ(c.step, 2);
    ASSERT_EQ(c.bucket, static_cast<int64_t>(i / 2));
    ASSERT_EQ(c.rank, static_cast<int64_t>(i % 2));
    ASSERT_TRUE(c.hidden_ms && c.exposed_ms) << i;
    EXPECT_NEAR(*c.hidden_ms, hidden[i], 1e-9) << i;
    EXPECT_NEAR(*c.exposed_ms, exposed[i], 1e-9) << i;
    EXPECT_NEAR(*c.hidden_ms + *c.exposed_ms, *c.duration_ms, 1e-9) << i;
  }
  EXPECT_DOUBLE_EQ(a.steps[2].exposed_comm_ms, 9);  // step 2, rank 0
  EXPECT_DOUBLE_EQ(a.steps[3].exposed_comm_ms, 4);
}

// The summary's straggler is the one rundir defines (the largest median launch lag over the
// steady steps), the rank the report's table and finding name too.
TEST(AnalyseComm, TheStragglerIsRundirsDefinition) {
  const CommAnalysis a = analyse_comm(two_ranks());
  ASSERT_TRUE(a.summary.straggler.has_value());
  EXPECT_EQ(rundir::straggler_rank(rundir::comm_rank_figures(a.steps)), a.summary.straggler->rank);
  EXPECT_FALSE(a.summary.clock_drift_ns_per_s_max.has_value());
}

TEST(AnalyseComm, OneRankHasNoStraggler) {
  CommInput in;
  in.clocks.push_back({0, {0, 0, 0, 1}, std::nullopt});
  in.spans.push_back(span(0, 1, Phase::kForward, 0, 10));
  const CommAnalysis a = analyse_comm(in);
  EXPECT_FALSE(a.summary.straggler.has_value());
  EXPECT_FALSE(a.summary.overlap.has_value());  // no communication: unknown, not 0
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(a.steps[0].compute_ms, 10);
}

}  // namespace
}  // namespace llmprof::dist
