// A data-parallel run's global figures from its ranks' rows, worked out by hand.
#include "llmprof/rundir/rank_merge.h"

#include <gtest/gtest.h>

namespace llmprof::rundir {
namespace {

StepRow row(int64_t step, double step_ms, double forward_ms, double loss, double mfu) {
  StepRow r;
  r.step = step;
  r.step_ms = step_ms;
  r.data_ms = 1;
  r.forward_ms = forward_ms;
  r.backward_ms = step_ms - forward_ms - 3;
  r.optimizer_ms = 2;
  r.loss = loss;
  r.lr = 0.1;
  r.tokens = 768;  // 12 x 64
  r.flops = 1e9;
  r.tokens_per_s = 768 / (step_ms * 1e-3);
  r.mfu = mfu;
  r.cpu_ms = step_ms;
  r.max_rss_bytes = 100;
  return r;
}

// Rank 0: 100 ms then 80 ms steps; rank 1: 120 ms then 60 ms. Step 1's slowest is rank 1 (120),
// step 2's rank 0 (80). Rank 1 stopped before step 3, so step 3 is left out.
std::vector<std::vector<StepRow>> two_ranks() {
  return {{row(1, 100, 30, 2.0, 0.5), row(2, 80, 20, 1.8, 0.5), row(3, 90, 20, 1.7, 0.5)},
          {row(1, 120, 50, 2.2, 0.4), row(2, 60, 20, 1.6, 0.6)}};
}

TEST(MergeRankSteps, EachRowIsTheJobsStepOverTheSlowestRank) {
  const std::vector<StepRow> m = merge_rank_steps(two_ranks());
  ASSERT_EQ(m.size(), 2u);  // step 3: rank 1 has none
  EXPECT_EQ(m[0].step, 1);
  EXPECT_DOUBLE_EQ(*m[0].slowest_rank, 1);
  EXPECT_DOUBLE_EQ(*m[0].step_ms, 120);
  EXPECT_DOUBLE_EQ(*m[0].forward_ms, 50);  // the slowest rank's phases
  EXPECT_DOUBLE_EQ(*m[0].tokens, 1536);    // both ranks' tokens
  EXPECT_DOUBLE_EQ(*m[0].tokens_per_s, 1536 / 0.120);
  EXPECT_DOUBLE_EQ(*m[0].flops_per_s, 2e9 / 0.120);
  // MFU against both ranks' peak: (0.5 x 100 + 0.4 x 120) / 120 / 2.
  EXPECT_NEAR(*m[0].mfu, (0.5 * 100 + 0.4 * 120) / 120 / 2, 1e-12);
  EXPECT_DOUBLE_EQ(*m[0].loss, 2.1);    // the mean of the ranks'
  EXPECT_DOUBLE_EQ(*m[0].cpu_ms, 220);  // summed
  EXPECT_DOUBLE_EQ(*m[0].max_rss_bytes, 100);
  EXPECT_DOUBLE_EQ(*m[1].slowest_rank, 0);
  EXPECT_DOUBLE_EQ(*m[1].step_ms, 80);
  EXPECT_DOUBLE_EQ(*m[1].tokens_per_s, 1536 / 0.080);
}

TEST(GlobalFigures, MediansOfTheMergedRowsAfterWarmUp) {
  const std::vector<StepRow> m = merge_rank_steps(two_ranks());
  const GlobalFigures g = global_figures(m, /*warmup_steps=*/1, /*samples_per_step=*/24);
  ASSERT_TRUE(g.timing.step_ms && g.throughput.tokens_per_s && g.throughput.samples_per_s);
  EXPECT_EQ(g.timing.step_ms->n, 1);
  EXPECT_DOUBLE_EQ(g.timing.step_ms->median, 80);
  EXPECT_DOUBLE_EQ(g.throughput.tokens_per_s->median, 1536 / 0.080);
  EXPECT_DOUBLE_EQ(g.throughput.samples_per_s->median, 24 / 0.080);
  EXPECT_DOUBLE_EQ(*g.timing.phase_sum_median_ms, 1 + 20 + 57 + 2);
  EXPECT_DOUBLE_EQ(*g.timing.unattributed_median_ms, 0);
  ASSERT_TRUE(g.mfu.has_value());
  EXPECT_NEAR(g.mfu->median, (0.5 * 80 + 0.6 * 60) / 80 / 2, 1e-12);
  const GlobalFigures none = global_figures(m, 2, 24);  // every step warm-up
  EXPECT_FALSE(none.timing.step_ms.has_value());
  EXPECT_FALSE(none.throughput.tokens_per_s.has_value());
  EXPECT_NE(none.timing.note.find("warm-up"), std::string::npos);
}

TEST(ScalingEfficiency, GlobalRateOverRanksTimesTheOneRankRate) {
  EXPECT_DOUBLE_EQ(*scaling_efficiency(15000, 2, 10000), 0.75);
  EXPECT_FALSE(scaling_efficiency(std::nullopt, 2, 10000).has_value());
  EXPECT_FALSE(scaling_efficiency(15000, 2, std::nullopt).has_value());
}

}  // namespace
}  // namespace llmprof::rundir
