// Planning `llmprof report --try`: one A/B per distinct set, what both arms share, the figure each
// set is judged by, and the steps of a repetition (fixture run_b: warm-up 1, 11 steps).
#include "llmprof/report/try.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "llmprof/error.h"
#include "llmprof/report/report.h"
#include "report/fixture_paths.h"

namespace llmprof::report {
namespace {

using test::report_fixture;

const PlannedTry& planned(const std::vector<PlannedTry>& plan, const std::string& set) {
  for (const auto& p : plan) {
    if (p.set == set) return p;
  }
  throw std::runtime_error("no planned try of " + set);
}

TEST(TrySteps, TheRunsStepsAtMostThirtyAndAboveWarmup) {
  rundir::Run r = rundir::load_run(report_fixture("run_b"));
  EXPECT_EQ(try_steps(r, std::nullopt), 11);  // summary.json steps.max_steps
  r.config["schedule.max_steps"] = "500";
  EXPECT_EQ(try_steps(r, std::nullopt), 30);
  r.config["schedule.max_steps"] = "2";
  EXPECT_EQ(try_steps(r, std::nullopt), 4);  // warm-up 1 + 3 measured steps
  EXPECT_EQ(try_steps(r, 4), 4);
  EXPECT_THROW(try_steps(r, 3), UsageError);
}

TEST(PlanTries, OneAbPerDistinctSetJudgedByTimePerToken) {
  const rundir::Run r = rundir::load_run(report_fixture("run_b"));
  const std::vector<Finding> findings = run_findings(r, compute_metrics(r));
  TryOptions o;
  o.executable = "/bin/llmprof";
  const std::vector<PlannedTry> plan = plan_tries(r, findings, o);
  std::vector<std::string> sets;
  for (const auto& p : plan) sets.push_back(p.set);
  std::vector<std::string> unique = sets;
  std::sort(unique.begin(), unique.end());
  EXPECT_EQ(std::unique(unique.begin(), unique.end()), unique.end()) << "a set planned twice";
  for (const auto& f : findings) {
    for (const auto& s : f.sets) {
      const PlannedTry& p = planned(plan, s);
      EXPECT_NE(std::find(p.rules.begin(), p.rules.end(), f.rule), p.rules.end()) << s;
    }
  }
  const PlannedTry& fused = planned(plan, "optim.fused=true");
  EXPECT_EQ(fused.trial.figure, ab::Figure::kStepUsPerToken);
  EXPECT_EQ(fused.trial.common_sets,
            (std::vector<std::string>{"schedule.max_steps=11", "train.eval_interval=0",
                                      "train.save_checkpoint=false",
                                      "train.checkpoint_interval=0"}));
  EXPECT_EQ(fused.trial.candidate_sets, std::vector<std::string>{"optim.fused=true"});
  EXPECT_EQ(fused.trial.config_path, r.dir + "/config.yaml");
  EXPECT_EQ(fused.trial.executable, "/bin/llmprof");
  EXPECT_EQ(fused.steps, 11);
  EXPECT_EQ(fused.trial.nproc, 1);  // a single-process run
  EXPECT_TRUE(fused.ranks.untried.empty());
}

TEST(PlanTries, EvalSettingsAreJudgedByWallTimeAndKeepTheirEvals) {
  const rundir::Run r = rundir::load_run(report_fixture("run_b"));
  const std::vector<PlannedTry> plan =
      plan_tries(r, run_findings(r, compute_metrics(r)), TryOptions{});
  const PlannedTry& p = planned(plan, "train.eval_interval=10");
  EXPECT_EQ(p.trial.figure, ab::Figure::kWallUsPerToken);
  EXPECT_EQ(p.trial.common_sets,
            (std::vector<std::string>{"schedule.max_steps=11", "train.save_checkpoint=false",
                                      "train.checkpoint_interval=0"}));
}

TEST(PlanTries, ARunWithoutConfigIsADataError) {
  rundir::Run r = rundir::load_run(report_fixture("run_b"));
  r.dir = "/nonexistent-run";
  Finding f;
  f.sets = {"threads=1"};
  EXPECT_THROW(plan_tries(r, {f}, TryOptions{}), DataError);
}

}  // namespace
}  // namespace llmprof::report
