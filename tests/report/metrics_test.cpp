// Derived figures of the fixture runs, checked against hand-computed values (see the fixture
// README): medians and linear-interpolated percentiles after warm-up, shares, module totals.
#include "llmprof/report/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report/fixture_paths.h"

namespace llmprof::report {
namespace {

using test::report_fixture;
constexpr double kTol = 1e-9;
constexpr double kMiB = 1048576;

TEST(StatsOf, InterpolatesPercentilesLinearly) {
  // sorted 9, 9.5, 10 x6, 10.5, 11: p10 at position 0.9 -> 9 + 0.9 * 0.5 = 9.45.
  Stats s = stats_of({10, 9, 10, 10.5, 10, 9.5, 10, 11, 10, 10});
  EXPECT_EQ(s.n, 10);
  EXPECT_NEAR(s.median, 10.0, kTol);
  EXPECT_NEAR(s.p10, 9.45, kTol);
  EXPECT_NEAR(s.p90, 10.55, kTol);
  EXPECT_NEAR(s.mean, 10.0, kTol);
  EXPECT_EQ(stats_of({}).n, 0);
}

TEST(ComputeMetrics, ExcludesWarmupAndTakesMedians) {
  RunMetrics m = compute_metrics(rundir::load_run(report_fixture("run_a")));
  EXPECT_EQ(m.steps_completed, 11);
  EXPECT_EQ(m.warmup_excluded, 1);
  ASSERT_NE(m.stat("step_ms"), nullptr);
  EXPECT_EQ(m.stat("step_ms")->n, 10);  // step 0 (50 ms) left out
  EXPECT_NEAR(m.stat("step_ms")->median, 10.0, kTol);
  EXPECT_NEAR(m.stat("step_ms")->p10, 9.45, kTol);
  EXPECT_NEAR(m.stat("step_ms")->p90, 10.55, kTol);
  EXPECT_NEAR(m.stat("tokens_per_s")->median, 51200, 1e-6);
  EXPECT_NEAR(m.stat("mfu")->median, 0.25, 1e-9);
  EXPECT_NEAR(*m.phase_share("data"), 0.2, kTol);       // 2 ms of 10
  EXPECT_NEAR(*m.phase_share("optimizer"), 0.1, kTol);  // 1 ms of 10
  EXPECT_EQ(m.stat("energy_j"), nullptr);
}

TEST(ComputeMetrics, EvalShareIsOfStepsPlusEvals) {
  RunMetrics m = compute_metrics(rundir::load_run(report_fixture("run_a")));
  EXPECT_NEAR(m.step_total_ms, 150, kTol);  // 50 + 100
  EXPECT_NEAR(m.eval_total_ms, 20, kTol);   // 2 evals x 10 ms
  EXPECT_NEAR(*m.eval_share, 20.0 / 170.0, kTol);
}

TEST(ComputeMetrics, FinalLossesComeFromTheLastEval) {
  RunMetrics m = compute_metrics(rundir::load_run(report_fixture("run_a")));
  EXPECT_DOUBLE_EQ(*m.final_train_loss, 3.1);
  EXPECT_TRUE(m.train_loss_from_eval);
  EXPECT_DOUBLE_EQ(*m.final_val_loss, 3.2);
  EXPECT_NEAR(*m.final_val_perplexity, std::exp(3.2), 1e-6);
  EXPECT_EQ(*m.peak_rss_bytes, 1073741824.0);
}

TEST(ComputeMetrics, SumsModulesOverBlocks) {
  RunMetrics m = compute_metrics(rundir::load_run(report_fixture("run_a")));
  const ScopeTotal& core = m.forward_scopes.at("attn.core");
  EXPECT_NEAR(core.total_ms, 0.4, kTol);  // 0.2 ms in each of 2 blocks
  EXPECT_NEAR(*core.share_of_pass, 0.4 / 3.0, 1e-8);
  EXPECT_FALSE(core.flops.has_value());  // no FLOPs of its own in the file
  const ScopeTotal& qkv = m.forward_scopes.at("attn.qkv");
  EXPECT_EQ(*qkv.flops, 2.0 * 3145728);    // 2 * B*T*C*3C per block
  EXPECT_NEAR(*qkv.mfu, 0.0524288, 1e-9);  // modules.csv mfu, time-weighted
  EXPECT_NEAR(m.backward_scopes.at("block").total_ms, 2.8, kTol);
  EXPECT_NEAR(m.forward_scopes.at("lm_head").total_ms, 0.3, kTol);
}

TEST(ComputeMetrics, MemoryByPhase) {
  RunMetrics m = compute_metrics(rundir::load_run(report_fixture("run_a")));
  ASSERT_EQ(m.memory_phases, (std::vector<std::string>{"forward", "backward", "optimizer"}));
  EXPECT_EQ(*m.memory.at("backward").peak_allocated_bytes, 150 * kMiB);
  EXPECT_EQ(*m.memory.at("backward").end_allocated_bytes, 40 * kMiB);
  EXPECT_EQ(*m.memory.at("forward").rss_bytes, 1024 * kMiB);  // max of 1000 MiB and 1 GiB
}

TEST(ComputeMetrics, IncompleteRunUsesStepsAndConfigWarmup) {
  auto run = rundir::load_run(report_fixture("run_incomplete"));
  RunMetrics m = compute_metrics(run);
  EXPECT_EQ(m.warmup_excluded, 1);                     // profile.warmup_steps in config.yaml
  EXPECT_NEAR(m.stat("step_ms")->median, 11.0, kTol);  // of 12, 10, 11
  EXPECT_DOUBLE_EQ(*m.final_train_loss, 3.7);          // the last step's loss: no eval ran
  EXPECT_FALSE(m.train_loss_from_eval);
  EXPECT_FALSE(m.final_val_loss.has_value());
  EXPECT_FALSE(m.eval_share.has_value());
}

TEST(ComputeMetrics, EnergyPrefersSummaryOverStepColumn) {
  RunMetrics m = compute_metrics(rundir::load_run(report_fixture("run_b")));
  EXPECT_EQ(*m.energy_j, 6.0);  // summary.json energy.total_j, not 11 x 0.4 from steps.csv
  EXPECT_NEAR(m.stat("energy_j")->median, 0.4, kTol);
}

}  // namespace
}  // namespace llmprof::report
