// Planning `llmprof report --try`: one A/B per distinct set, what both arms share, the figure each
// set is judged by, and the steps of a repetition (fixture run_b: warm-up 1, 11 steps).
#include "llmprof/report/try.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/report/report.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

using test::expect_contains;
using test::report_fixture;
using test::ScratchDir;

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
  EXPECT_EQ(
      fused.trial.common_sets,
      (std::vector<std::string>{"schedule.max_steps=11", "train.eval_interval=0",
                                "train.save_checkpoint=false", "train.checkpoint_interval=0"}));
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

// Both arms' sets applied to the run's config.yaml pass `llmprof train`'s checks.
void expect_trains(const rundir::Run& r, const PlannedTry& p) {
  config::Config cfg = config::load_config(r.dir + "/config.yaml");
  for (const auto& [k, v] : r.config) {
    if (k.rfind("train.", 0) == 0 || k.rfind("model.init_from", 0) == 0) {
      config::apply_override(cfg, k + "=" + v);
    }
  }
  for (const auto& set : p.trial.common_sets) config::apply_override(cfg, set);
  for (const auto& set : p.trial.candidate_sets) config::apply_override(cfg, set);
  EXPECT_NO_THROW(config::validate(cfg)) << p.set;
  EXPECT_FALSE(cfg.train.save_checkpoint) << p.set;
  EXPECT_TRUE(cfg.train.resume_from.empty()) << p.set;
}

// The issue's cases: a run saved with train.checkpoint_interval (checkpointing on), resumed from
// a checkpoint, started from one of its own: each trial is a fresh short run without them.
TEST(PlanTries, ATrialOfACheckpointedResumedRunTrainsFresh) {
  rundir::Run r = rundir::load_run(report_fixture("run_b"));
  r.config["train.save_checkpoint"] = "true";
  r.config["train.checkpoint_interval"] = "3";
  r.config["train.resume_from"] = r.dir + "/checkpoint-step3";
  r.config["model.init_from"] = r.dir + "/checkpoint";
  const std::vector<PlannedTry> plan =
      plan_tries(r, run_findings(r, compute_metrics(r)), TryOptions{});
  const PlannedTry& fused = planned(plan, "optim.fused=true");
  EXPECT_EQ(fused.trial.common_sets,
            (std::vector<std::string>{"schedule.max_steps=11", "train.eval_interval=0",
                                      "train.save_checkpoint=false", "train.checkpoint_interval=0",
                                      "train.resume_from=", "model.init_from="}));
  for (const auto& p : plan) expect_trains(r, p);
  // Weights from elsewhere define the run: kept.
  r.config["model.init_from"] = "/models/gpt2";
  r.config.erase("train.resume_from");
  const std::vector<PlannedTry> again =
      plan_tries(r, run_findings(r, compute_metrics(r)), TryOptions{});
  const auto& sets = planned(again, "optim.fused=true").trial.common_sets;
  EXPECT_EQ(sets.back(), "train.checkpoint_interval=0");
}

// A set about checkpoints keeps what it needs: an interval saves checkpoints.
TEST(PlanTries, ACheckpointIntervalSetSavesCheckpoints) {
  const rundir::Run r = rundir::load_run(report_fixture("run_b"));
  Finding f;
  f.rule = "made_up";
  f.sets = {"train.checkpoint_interval=5"};
  const std::vector<PlannedTry> plan = plan_tries(r, {f}, TryOptions{});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].trial.common_sets,
            (std::vector<std::string>{"schedule.max_steps=11", "train.eval_interval=0",
                                      "train.save_checkpoint=true"}));
}

// A run directory: run_b's config.yaml and a summary.json with `distributed` (and each rank's
// env.json naming its host, when hosts are given).
std::string distributed_run(const ScratchDir& dir,
                            const std::string& distributed,
                            const std::vector<std::string>& hosts = {}) {
  test::write_file(dir.file("config.yaml"),
                   test::read_file(report_fixture("run_b") + "/config.yaml"));
  test::write_file(
      dir.file("summary.json"),
      R"({"schema_version": 1, "status": "completed", "distributed": )" + distributed + "}");
  for (size_t k = 0; k < hosts.size(); ++k) {
    test::write_file(dir.file("rank" + std::to_string(k) + "/env.json"),
                     R"({"schema_version": 1, "host": {"hostname": ")" + hosts[k] + "\"}}");
  }
  return dir.path();
}

TEST(TrialRanks, ALocalTwoRankRunIsTriedWithTwoRanksHere) {
  ScratchDir dir("try");
  rundir::Run r = rundir::load_run(report_fixture("run_b"));
  r.dir = distributed_run(
      dir, R"({"world_size": 2, "launcher": "torchrun", "rank_dirs": ["rank0", "rank1"]})",
      {"node1", "node1"});
  const TrialRanks t = trial_ranks(r.dir);
  EXPECT_EQ(t.world_size, 2);
  EXPECT_EQ(t.launcher, "torchrun");
  EXPECT_EQ(t.untried, "");
  const std::vector<PlannedTry> plan =
      plan_tries(r, run_findings(r, compute_metrics(r)), TryOptions{});
  ASSERT_FALSE(plan.empty());
  for (const auto& p : plan) {
    EXPECT_EQ(p.trial.nproc, 2) << p.set;  // ab::train_argv: --nproc 2 (tests/ab)
  }
  const TriedSet t2 = tried_of(plan[0], ab::AbResult{}, "now", "cmd");
  EXPECT_EQ(t2.world_size, 2);
  EXPECT_EQ(t2.launcher, "nproc");
}

TEST(TrialRanks, SlurmSeveralHostsAndARanksOwnDirectoryAreNotTriedSayingWhy) {
  ScratchDir slurm("try"), hosts("try"), rank("try");
  distributed_run(slurm, R"({"world_size": 4, "launcher": "slurm"})");
  expect_contains(trial_ranks(slurm.path()).untried,
                  "the run's 4 ranks were started by Slurm (srun) on its job's nodes");
  distributed_run(hosts, R"({"world_size": 2, "launcher": "torchrun", "rank_dirs": ["rank0",
                  "rank1"]})",
                  {"node1", "node2"});
  expect_contains(trial_ranks(hosts.path()).untried,
                  "the run's 2 ranks ran on 2 hosts (node1, node2)");
  distributed_run(rank, R"({"world_size": 2, "rank": 1, "top_dir": "runs/top"})");
  const TrialRanks own = trial_ranks(rank.path());
  expect_contains(own.untried,
                  "is rank 1's own directory of a 2-rank run: `llmprof report --try "
                  "runs/top` tries the run with all its ranks");
  rundir::Run r = rundir::load_run(report_fixture("run_b"));
  r.dir = slurm.path();
  const std::vector<PlannedTry> plan =
      plan_tries(r, run_findings(r, compute_metrics(r)), TryOptions{});
  ASSERT_FALSE(plan.empty());
  const TriedSet t = untried_of(plan[0], plan[0].ranks.untried, "now", "cmd");
  EXPECT_EQ(t.world_size, 4);
  EXPECT_EQ(t.launcher, "slurm");
  // One process: no distributed section.
  EXPECT_EQ(trial_ranks(report_fixture("run_b")).world_size, 1);
  EXPECT_EQ(trial_ranks(report_fixture("run_b")).untried, "");
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
