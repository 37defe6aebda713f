// Each findings rule against the two fixture runs: run_a trips data_wait, low_mfu_small_batch and
// memory_headroom; run_b trips the other five. Measured figures are hand-computed.
#include "llmprof/report/findings.h"

#include <gtest/gtest.h>

#include <regex>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

using test::expect_contains;

using test::report_fixture;

struct Fixture {
  Run run;
  RunMetrics m;
};

const Fixture& run_a() {
  static const Fixture f = [] {
    Run r = rundir::load_run(report_fixture("run_a"));
    RunMetrics m = compute_metrics(r);
    return Fixture{std::move(r), std::move(m)};
  }();
  return f;
}

const Fixture& run_b() {
  static const Fixture f = [] {
    Run r = rundir::load_run(report_fixture("run_b"));
    RunMetrics m = compute_metrics(r);
    return Fixture{std::move(r), std::move(m)};
  }();
  return f;
}

TEST(RuleDataWait, FiresWhenDataIsTwentyPercentOfStep) {
  auto f = rule_data_wait(run_a().run, run_a().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 0.2, 1e-12);  // 2 ms of a 10 ms median step
  EXPECT_EQ(f->threshold, 0.10);
  expect_contains(f->evidence, "20.0%");
  expect_contains(f->suggestion, "--set data.num_workers=1");  // num_workers was 0
}

TEST(RuleDataWait, SilentAtThreePercent) {
  EXPECT_FALSE(rule_data_wait(run_b().run, run_b().m).has_value());  // 0.5 of 16 ms
}

TEST(RuleEvalShare, FiresAndSizesTheNewInterval) {
  auto f = rule_eval_share(run_b().run, run_b().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 0.25, 1e-12);  // 80 ms of evals / (240 ms of steps + 80)
  // k = 80 * 0.85 / (0.15 * 240) = 1.889: interval ceil(5 k) = 10, eval_steps floor(10 / k) = 5.
  expect_contains(f->suggestion, "--set train.eval_interval=10");
  expect_contains(f->suggestion, "--set train.eval_steps=5");
}

TEST(RuleEvalShare, SilentBelowFifteenPercent) {
  EXPECT_FALSE(rule_eval_share(run_a().run, run_a().m).has_value());  // 20 / 170 = 11.8%
}

TEST(RuleOptimizerShare, FiresAboveAQuarterOfStep) {
  auto f = rule_optimizer_share(run_b().run, run_b().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 5.0 / 16.0, 1e-12);
  expect_contains(f->suggestion, "--set optim.fused=true");  // run_b: adamw, not fused
  expect_contains(f->suggestion, "--set train.batch_size=32");
}

// train refuses optim.fused on a LibTorch without the fused CPU kernels (< 2.4): the finding names
// the version instead of suggesting a --set that cannot run.
TEST(RuleOptimizerShare, NoFusedSetOnALibTorchThatRefusesIt) {
  rundir::Run run = run_b().run;
  run.torch_version = "1.13.1";
  auto f = rule_optimizer_share(run, run_b().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->suggestion.find("--set optim.fused"), std::string::npos) << f->suggestion;
  expect_contains(f->suggestion, "needs LibTorch >= 2.4 on CPU; this run's is 1.13.1");
  run.torch_version = "2.5.0";
  expect_contains(rule_optimizer_share(run, run_b().m)->suggestion, "--set optim.fused=true");
}

TEST(RuleOptimizerShare, SilentAtTenPercent) {
  EXPECT_FALSE(rule_optimizer_share(run_a().run, run_a().m).has_value());
}

TEST(RuleAttentionCore, FiresWhenCoreDominatesBlocks) {
  auto f = rule_attention_core(run_b().run, run_b().m);
  ASSERT_TRUE(f.has_value());
  // (0.8 fwd + 0.7 bwd) x 2 blocks / ((2.0 + 1.5) x 2 blocks) = 3 / 7.
  EXPECT_NEAR(f->measured, 3.0 / 7.0, 1e-9);
  expect_contains(f->suggestion, "--set model.block_size=32");
}

TEST(RuleAttentionCore, SilentAtFifteenPercentAndWithoutModules) {
  EXPECT_FALSE(rule_attention_core(run_a().run, run_a().m).has_value());  // 0.8 / 5.2
  auto bare = rundir::load_run(report_fixture("run_incomplete"));
  EXPECT_FALSE(rule_attention_core(bare, compute_metrics(bare)).has_value());
}

TEST(RuleLowMfuSmallBatch, FiresAtQuarterMfuAndBatchFour) {
  auto f = rule_low_mfu_small_batch(run_a().run, run_a().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 0.25, 1e-9);
  expect_contains(f->suggestion, "--set train.batch_size=8");
}

TEST(RuleLowMfuSmallBatch, SilentAtHighMfuLargeBatch) {
  EXPECT_FALSE(rule_low_mfu_small_batch(run_b().run, run_b().m).has_value());  // 45%, batch 16
}

TEST(RuleMemoryHeadroom, FiresBelowHalfOfHostMemory) {
  auto f = rule_memory_headroom(run_a().run, run_a().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->measured, 1.0 / 16.0, 1e-12);  // 1 GiB of 16 GiB
  expect_contains(f->evidence, "6.2%");
}

TEST(RuleMemoryHeadroom, SilentAtThreeQuarters) {
  EXPECT_FALSE(rule_memory_headroom(run_b().run, run_b().m).has_value());  // 12 of 16 GiB
}

TEST(RulePageFaults, FiresAboveHundredPerStepAndTurnsTuningOn) {
  auto f = rule_page_faults(run_b().run, run_b().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->measured, 250);
  expect_contains(f->suggestion, "--set runtime.malloc_tuning=true");
}

TEST(RulePageFaults, FiresOnFaultBurstsEveryOtherStepThatLeaveTheMedianAtZero) {
  RunMetrics m = run_a().m;
  m.step["minor_faults"] = stats_of({0, 0, 0, 9000, 9000});  // median 0, mean 3600
  auto f = rule_page_faults(run_a().run, m);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->measured, 3600);
  expect_contains(f->evidence, "median 0, mean 3600");
  expect_contains(f->suggestion, "--set runtime.malloc_mmap_threshold_bytes=");
}

TEST(RulePageFaults, SilentAtTenPerStep) {
  EXPECT_FALSE(rule_page_faults(run_a().run, run_a().m).has_value());  // step 0's 5000 is warm-up
}

TEST(RuleContextSwitches, FiresAboveHundredPerStep) {
  auto f = rule_context_switches(run_b().run, run_b().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->measured, 150);
  expect_contains(f->suggestion, "--set threads=1");  // threads 2 -> 1
}

TEST(RuleContextSwitches, SilentAtTwoPerStep) {
  EXPECT_FALSE(rule_context_switches(run_a().run, run_a().m).has_value());
}

// A fixture run with config keys replaced.
Run with_config(const Fixture& f, const std::map<std::string, std::string>& keys) {
  Run r = f.run;
  for (const auto& [k, v] : keys) r.config[k] = v;
  return r;
}

void expect_no_set(const Finding& f) {
  EXPECT_EQ(f.suggestion.find("--set"), std::string::npos) << f.suggestion;
}

// Every `--set key=value` of a suggestion, applied to the run's config, passes the key's range
// and the cross-key checks, and no eval_interval lies beyond the run's last step.
void expect_valid_sets(const Run& run, const Finding& f) {
  config::Config cfg;
  for (const auto& [k, v] : run.config) {
    try {
      config::apply_override(cfg, k + "=" + v);
    } catch (const Error&) {
    }
  }
  std::regex set_re("--set ([a-z_.]+)=([^` ]+)");
  for (std::sregex_iterator it(f.suggestion.begin(), f.suggestion.end(), set_re), end; it != end;
       ++it) {
    std::string key = (*it)[1], value = (*it)[2];
    config::Config c = cfg;
    EXPECT_NO_THROW({
      config::apply_override(c, key + "=" + value);
      config::validate(c);
    }) << f.rule
       << ": " << f.suggestion;
    if (key == "train.eval_interval") EXPECT_LE(std::stoll(value), cfg.schedule.max_steps);
    if (key == "runtime.malloc_mmap_threshold_bytes") EXPECT_LE(std::stoll(value), INT32_MAX);
  }
}

TEST(RuleEvalShare, NeverSuggestsAnIntervalBeyondTheLastStep) {
  // The case: a 30-step run evaluating every 30 steps (at the end only) was told
  // eval_interval=57; raising it cannot evaluate less often.
  auto r = with_config(run_b(), {{"schedule.max_steps", "30"}, {"train.eval_interval", "30"}});
  auto f = rule_eval_share(r, run_b().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->suggestion.find("train.eval_interval="), std::string::npos) << f->suggestion;
  expect_contains(f->suggestion, "--set train.eval_steps=5");
  expect_valid_sets(r, *f);
  // An 8-step run evaluating every 5: once at the end is as far as the interval goes.
  auto eight = with_config(run_b(), {{"schedule.max_steps", "8"}, {"schedule.warmup_steps", "2"}});
  auto f8 = rule_eval_share(eight, run_b().m);
  ASSERT_TRUE(f8.has_value());
  expect_contains(f8->suggestion, "--set train.eval_interval=8");
  expect_valid_sets(eight, *f8);
}

TEST(RuleEvalShare, TakesMaxStepsFromTheSummaryWhenTheConfigLacksIt) {
  // run_b's config.yaml has no schedule.max_steps; its summary.json says 11 steps.
  auto r = with_config(run_b(), {{"train.eval_interval", "8"}});
  auto f = rule_eval_share(r, run_b().m);
  ASSERT_TRUE(f.has_value());
  expect_contains(f->suggestion, "--set train.eval_interval=11");
}

TEST(RuleEvalShare, SaysWhatToChangeInWordsWhenNoSetIsValid) {
  auto r = with_config(
      run_b(),
      {{"schedule.max_steps", "30"}, {"train.eval_interval", "30"}, {"train.eval_steps", "1"}});
  auto f = rule_eval_share(r, run_b().m);
  ASSERT_TRUE(f.has_value());
  expect_no_set(*f);
  expect_contains(f->suggestion, "schedule.max_steps");
}

TEST(RuleDataWait, NumWorkersStaysWithinItsRange) {
  auto forty = with_config(run_a(), {{"data.num_workers", "40"}});
  auto f = rule_data_wait(forty, run_a().m);
  ASSERT_TRUE(f.has_value());
  expect_contains(f->suggestion, "--set data.num_workers=64");
  expect_valid_sets(forty, *f);
  auto at_max = rule_data_wait(with_config(run_a(), {{"data.num_workers", "64"}}), run_a().m);
  ASSERT_TRUE(at_max.has_value());
  expect_no_set(*at_max);
}

TEST(RuleOptimizerShare, BatchAndAccumulationStayWithinTheirRanges) {
  auto r =
      with_config(run_b(), {{"train.batch_size", "1048576"}, {"train.grad_accum_steps", "65536"}});
  auto f = rule_optimizer_share(r, run_b().m);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->suggestion.find("--set train."), std::string::npos) << f->suggestion;
  auto accum = with_config(run_b(), {{"train.grad_accum_steps", "40000"}});
  auto fa = rule_optimizer_share(accum, run_b().m);
  ASSERT_TRUE(fa.has_value());
  expect_contains(fa->suggestion, "--set train.grad_accum_steps=65536");
  expect_valid_sets(accum, *fa);
}

TEST(RuleMemoryHeadroom, NoLargerBatchBeyondTheKeyRange) {
  auto f = rule_memory_headroom(with_config(run_a(), {{"train.batch_size", "1048576"}}), run_a().m);
  ASSERT_TRUE(f.has_value());
  expect_no_set(*f);
}

TEST(RuleAttentionCore, KeepsTheEncodersMinimumBlockSize) {
  // A distilbert block needs [CLS], a token and [SEP]: block_size 4 cannot halve to 2.
  auto r = with_config(run_b(), {{"model.type", "distilbert"},
                                 {"model.block_size", "4"},
                                 {"data.tokenizer", "wordpiece"},
                                 {"data.path", "corpus.txt"},
                                 {"data.vocab_path", "vocab.txt"},
                                 {"train.task", "mlm"}});
  auto f = rule_attention_core(r, run_b().m);
  ASSERT_TRUE(f.has_value());
  expect_contains(f->suggestion, "--set model.block_size=3");
  expect_valid_sets(r, *f);
  r.config["model.block_size"] = "3";
  auto at_min = rule_attention_core(r, run_b().m);
  ASSERT_TRUE(at_min.has_value());
  expect_no_set(*at_min);
}

TEST(RulePageFaults, MmapThresholdStaysWithinWhatMalloptTakes) {
  // The runtime hands the threshold to mallopt as an int: 4 x 512 MiB would wrap negative.
  RunMetrics m = run_a().m;
  m.step["minor_faults"] = stats_of({500, 500, 500});
  auto r = with_config(run_a(), {{"runtime.malloc_mmap_threshold_bytes", "536870912"}});
  auto f = rule_page_faults(r, m);
  ASSERT_TRUE(f.has_value());
  expect_contains(f->suggestion, "--set runtime.malloc_mmap_threshold_bytes=1073741824");
  expect_valid_sets(r, *f);
  r.config["runtime.malloc_mmap_threshold_bytes"] = "1073741824";
  auto at_max = rule_page_faults(r, m);
  ASSERT_TRUE(at_max.has_value());
  expect_no_set(*at_max);
}

TEST(RunFindings, EverySuggestedSetIsValidForTheFixtureRuns) {
  for (const Fixture* fx : {&run_a(), &run_b()}) {
    for (const auto& f : run_findings(fx->run, fx->m)) expect_valid_sets(fx->run, f);
  }
}

TEST(RunFindings, AppliesEveryRuleInOrder) {
  std::vector<std::string> a, b;
  for (const auto& f : run_findings(run_a().run, run_a().m)) a.push_back(f.rule);
  for (const auto& f : run_findings(run_b().run, run_b().m)) b.push_back(f.rule);
  EXPECT_EQ(a, (std::vector<std::string>{"data_wait", "low_mfu_small_batch", "memory_headroom"}));
  EXPECT_EQ(b, (std::vector<std::string>{"eval_share", "optimizer_share", "attention_core",
                                         "page_faults", "context_switches"}));
}

}  // namespace
}  // namespace llmprof::report
