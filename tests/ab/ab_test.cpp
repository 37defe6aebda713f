// The A/B engine: the order the arms run in, pairing by round, progress, errors passing through,
// and a repetition as a process (a stand-in for `llmprof train` written as a shell script, so these
// tests need no LibTorch) measured from the run directory it writes.
#include "llmprof/ab/ab.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "llmprof/ab/train_trial.h"
#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::ab {
namespace {

using test::ScratchDir;

TEST(AbRun, AlternatesTheArmsAndPairsThemByRound) {
  std::vector<std::string> order;
  std::vector<int64_t> done_counts;
  auto run_one = [&](Arm arm, int64_t round) {
    order.push_back(std::string(arm_name(arm)) + std::to_string(round));
    Repetition r;
    r.figure = arm == Arm::kBaseline ? 10.0 + round : 5.0 + round;
    return r;
  };
  auto progress = [&](const Repetition&, int64_t done, int64_t total) {
    done_counts.push_back(done);
    EXPECT_EQ(total, 12);
  };
  const AbResult r = run_ab(6, run_one, progress);
  EXPECT_EQ(order,
            (std::vector<std::string>{"baseline0", "candidate0", "candidate1", "baseline1",
                                      "baseline2", "candidate2", "candidate3", "baseline3",
                                      "baseline4", "candidate4", "candidate5", "baseline5"}));
  EXPECT_EQ(done_counts.size(), 12u);
  EXPECT_EQ(done_counts.back(), 12);
  EXPECT_EQ(r.baseline, (std::vector<double>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(r.candidate, (std::vector<double>{5, 6, 7, 8, 9, 10}));
  ASSERT_EQ(r.repetitions.size(), 12u);
  EXPECT_EQ(r.repetitions[2].arm, Arm::kCandidate);
  EXPECT_EQ(r.repetitions[2].round, 1);
  // Candidate medians 7.5 against 12.5; every paired ratio (5/10 .. 10/15) lies below 1.
  EXPECT_DOUBLE_EQ(r.comparison.ratio_of_medians, 7.5 / 12.5);
  EXPECT_EQ(r.comparison.verdict, Verdict::kFaster);
}

TEST(AbRun, RefusesFewerRoundsThanA95PercentIntervalNeeds) {
  auto never = [](Arm, int64_t) -> Repetition {
    ADD_FAILURE() << "no repetition should run";
    return {};
  };
  EXPECT_THROW(run_ab(5, never), UsageError);  // 5 pairs: 93.75% at best
}

TEST(AbRun, AFailedRepetitionStopsTheComparison) {
  int runs = 0;
  auto run_one = [&](Arm arm, int64_t) -> Repetition {
    ++runs;
    if (arm == Arm::kCandidate) throw Error("candidate refused");
    return Repetition{arm, 0, 1.0, ""};
  };
  EXPECT_THROW(run_ab(6, run_one), Error);
  EXPECT_EQ(runs, 2);  // baseline, then the failing candidate: nothing after it
}

// A stand-in for `llmprof train`: writes <output.dir>/<output.name>/summary.json with a median step
// of 10 ms (5 ms with --set fast=true), 1000 tokens per step; exits 2 naming the key with
// --set broken=true. With --nproc N (N > 1) the directory is a data-parallel run's top: its
// summary.json has distributed.world_size N and rank0/ .. rank<N-1>/ each the rank's own summary
// (none with --set oneproc=true: what a trial that ignores the run's ranks leaves).
std::string fake_train(const ScratchDir& dir) {
  const std::string path = dir.file("fake_llmprof.sh");
  test::write_file(path, R"(#!/bin/sh
out=""; name=""; ms=10; n=1; ranks=yes
while [ $# -gt 0 ]; do
  case "$1" in
    output.dir=*) out="${1#output.dir=}" ;;
    output.name=*) name="${1#output.name=}" ;;
    fast=true) ms=5 ;;
    oneproc=true) ranks=no ;;
    broken=true) echo "error: broken: no such key" >&2; exit 2 ;;
    --nproc) shift; n="$1" ;;
  esac
  shift
done
mkdir -p "$out/$name"
tps=$((1000 * 1000 / ms))
dist=""
if [ "$n" -gt 1 ]; then dist=",\"distributed\":{\"world_size\":$n,\"launcher\":\"torchrun\"}"; fi
printf '{"schema_version":1,"status":"completed","timing":{"step_ms":{"median":%s}},"throughput":{"tokens_per_s":{"median":%s}}%s}\n' "$ms" "$tps" "$dist" > "$out/$name/summary.json"
k=0
while [ "$n" -gt 1 ] && [ "$ranks" = yes ] && [ "$k" -lt "$n" ]; do
  mkdir -p "$out/$name/rank$k"
  printf '{"schema_version":1,"status":"completed","distributed":{"rank":%s,"world_size":%s}}\n' "$k" "$n" > "$out/$name/rank$k/summary.json"
  k=$((k + 1))
done
)");
  ::chmod(path.c_str(), 0755);
  return path;
}

TrainTrial trial_of(const ScratchDir& dir, const std::string& candidate_set) {
  TrainTrial t;
  t.executable = fake_train(dir);
  t.config_path = dir.file("config.yaml");
  t.common_sets = {"schedule.max_steps=5"};
  t.candidate_sets = {candidate_set};
  t.scratch_dir = dir.path();
  t.tag = "try1";
  return t;
}

TEST(AbTrainTrial, ArgvCarriesCommonThenCandidateSetsAndTheScratchOutput) {
  ScratchDir dir("ab");
  const TrainTrial t = trial_of(dir, "fast=true");
  const std::vector<std::string> base = train_argv(t, Arm::kBaseline, 0);
  const std::vector<std::string> want_base = {t.executable, "train",
                                              "--config",   t.config_path,
                                              "--set",      "schedule.max_steps=5",
                                              "--set",      "output.dir=" + dir.path(),
                                              "--set",      "output.name=try1-baseline-1",
                                              "--quiet"};
  EXPECT_EQ(base, want_base);
  const std::vector<std::string> cand = train_argv(t, Arm::kCandidate, 1);
  EXPECT_NE(std::find(cand.begin(), cand.end(), "fast=true"), cand.end());
  EXPECT_NE(std::find(cand.begin(), cand.end(), "output.name=try1-candidate-2"), cand.end());
}

TEST(AbTrainTrial, RunsRepetitionsAsProcessesAndReadsTheirFigures) {
  ScratchDir dir("ab");
  TrainTrial t = trial_of(dir, "fast=true");
  t.figure = Figure::kStepUsPerToken;
  const AbResult r =
      run_ab(6, [&](Arm arm, int64_t round) { return run_train_repetition(t, arm, round); });
  // 10 ms / 1000 tokens = 10 us per token; 5 ms: 5 us.
  EXPECT_EQ(r.baseline, (std::vector<double>(6, 10)));
  EXPECT_EQ(r.candidate, (std::vector<double>(6, 5)));
  EXPECT_EQ(r.comparison.verdict, Verdict::kFaster);
  EXPECT_EQ(r.repetitions[0].run_dir, dir.path() + "/try1-baseline-1");
  t.figure = Figure::kMedianStepMs;
  EXPECT_DOUBLE_EQ(read_figure(dir.path() + "/try1-candidate-2", t.figure), 5);
}

TEST(AbTrainTrial, AFailedTrainNamesTheArmTheExitAndItsLastLogLine) {
  ScratchDir dir("ab");
  const TrainTrial t = trial_of(dir, "broken=true");
  try {
    run_train_repetition(t, Arm::kCandidate, 0);
    ADD_FAILURE() << "no error";
  } catch (const RepetitionError& e) {
    EXPECT_EQ(e.arm(), Arm::kCandidate);
    const std::string what = e.what();
    EXPECT_NE(what.find("candidate repetition 1 failed (exit 2)"), std::string::npos) << what;
    EXPECT_NE(what.find("error: broken: no such key"), std::string::npos) << what;
    EXPECT_NE(what.find("try1-candidate-1.log"), std::string::npos) << what;
  }
}

// A data-parallel run's trial: `--nproc 2` at the end of each arm's command line, and each
// repetition counted by the rank directories its top directory holds.
TEST(AbTrainTrial, ADataParallelTrialTrainsEveryRankPerArm) {
  ScratchDir dir("ab");
  TrainTrial t = trial_of(dir, "fast=true");
  t.nproc = 2;
  for (Arm arm : {Arm::kBaseline, Arm::kCandidate}) {
    const std::vector<std::string> argv = train_argv(t, arm, 0);
    ASSERT_GE(argv.size(), 2u);
    EXPECT_EQ(std::vector<std::string>(argv.end() - 2, argv.end()),
              (std::vector<std::string>{"--nproc", "2"}));
  }
  const Repetition rep = run_train_repetition(t, Arm::kCandidate, 0);
  EXPECT_EQ(rep.ranks, 2);
  EXPECT_DOUBLE_EQ(rep.figure, 5);  // the top directory's median step
  EXPECT_EQ(trained_ranks(dir.file("try1-candidate-1")), 2);
  t.nproc = 1;
  const std::vector<std::string> one = train_argv(t, Arm::kBaseline, 0);
  EXPECT_EQ(std::find(one.begin(), one.end(), "--nproc"), one.end());
}

// A repetition that trained one process for a two-rank run is no measurement of it.
TEST(AbTrainTrial, ARepetitionWithoutTheRunsRanksIsAnError) {
  ScratchDir dir("ab");
  TrainTrial t = trial_of(dir, "oneproc=true");
  t.nproc = 2;
  try {
    run_train_repetition(t, Arm::kCandidate, 1);
    ADD_FAILURE() << "no error";
  } catch (const RepetitionError& e) {
    EXPECT_EQ(e.arm(), Arm::kCandidate);
    const std::string what = e.what();
    EXPECT_NE(what.find("candidate repetition 2 trained 1 rank process, not the run's 2"),
              std::string::npos)
        << what;
  }
  // A rank directory whose summary names another rank breaks the count, naming the file.
  test::write_file(dir.file("run/summary.json"),
                   R"({"schema_version":1,"status":"completed","distributed":{"world_size":2}})");
  test::write_file(dir.file("run/rank0/summary.json"),
                   R"({"schema_version":1,"distributed":{"rank":1,"world_size":2}})");
  const std::string what = test::data_error_of([&] { trained_ranks(dir.file("run")); });
  EXPECT_NE(what.find("rank0/summary.json: not rank 0 of the world size 2"), std::string::npos)
      << what;
}

TEST(AbReadFigure, NamesTheSummaryOfARunThatDidNotComplete) {
  ScratchDir dir("ab");
  test::write_file(dir.file("run/summary.json"),
                   R"({"schema_version":1,"status":"diverged","message":"loss NaN"})");
  const std::string what =
      test::data_error_of([&] { read_figure(dir.file("run"), Figure::kMedianStepMs); });
  EXPECT_NE(what.find("summary.json: status diverged (loss NaN)"), std::string::npos) << what;
  const std::string missing =
      test::data_error_of([&] { read_figure(dir.file("none"), Figure::kMedianStepMs); });
  EXPECT_NE(missing.find("did not finish"), std::string::npos) << missing;
}

// Two steps of 100 tokens, 10 ms each, the second with a 30 ms eval: (10 + 10 + 30) ms / 200
// tokens = 250 us per token.
TEST(AbReadFigure, WallTimePerTokenCountsEvals) {
  ScratchDir dir("ab");
  test::write_file(dir.file("run/summary.json"), R"({"schema_version":1,"status":"completed"})");
  test::write_file(dir.file("run/steps.csv"),
                   "step,tokens,step_ms,eval_ms\n1,100,10,\n2,100,10,30\n");
  EXPECT_DOUBLE_EQ(read_figure(dir.file("run"), Figure::kWallUsPerToken), 250);
  const std::string what =
      test::data_error_of([&] { read_figure(dir.file("run"), Figure::kStepUsPerToken); });
  EXPECT_NE(what.find("no throughput tokens_per_s median"), std::string::npos) << what;
}

// 200 tokens over 50 J (summary.json's tokens_per_j = 4): 0.25 J per token. A run without energy
// has no figure, and the error says why the run had none.
TEST(AbReadFigure, EnergyPerTokenIsTheInverseOfTokensPerJoule) {
  ScratchDir dir("ab");
  test::write_file(dir.file("run/summary.json"),
                   R"({"schema_version":1,"status":"completed",)"
                   R"("energy":{"total_j":50,"tokens_per_j":4,"source":"rapl"}})");
  EXPECT_DOUBLE_EQ(read_figure(dir.file("run"), Figure::kEnergyJPerToken), 0.25);
  test::write_file(dir.file("none/summary.json"),
                   R"({"schema_version":1,"status":"completed",)"
                   R"("energy":{"total_j":null,"reason":"no energy sensor available"}})");
  const std::string what =
      test::data_error_of([&] { read_figure(dir.file("none"), Figure::kEnergyJPerToken); });
  EXPECT_NE(what.find("no energy.tokens_per_j (no energy sensor available)"), std::string::npos)
      << what;
}

TEST(AbFigure, NamesRoundTrip) {
  for (Figure f : {Figure::kMedianStepMs, Figure::kStepUsPerToken, Figure::kWallUsPerToken,
                   Figure::kEnergyJPerToken}) {
    EXPECT_EQ(parse_figure(figure_name(f)), f);
  }
  EXPECT_FALSE(parse_figure("tokens").has_value());
}

}  // namespace
}  // namespace llmprof::ab
