// llmprof check as a CI job runs it: exit codes 0/3/4/2/1 each reached from the command line, bad
// input named, the step summary, two sweep directories point by point.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace llmprof {
namespace {

using test::expect_contains;
using test::run_llmprof;
using test::ScratchDir;

const std::string kBaseline = std::string(LLMPROF_SOURCE_DIR) + "/tests/check/ci_smoke_baseline";

TEST(CheckCli, SameDirectoryPassesAndTimingIsOnlyReported) {
  const auto r = run_llmprof({"check", kBaseline, kBaseline, "--within", "loss@20=0", "--max",
                              "step_ms=+1%"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "pass         loss@20=0");
  expect_contains(r.output, "reported     step_ms=+1%");
}

TEST(CheckCli, BadInputExitsTwoNamingIt) {
  ScratchDir dir("check-cli");
  auto r = run_llmprof({"check", kBaseline, dir.file("missing")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, dir.file("missing") + ": no such run directory");
  r = run_llmprof({"check", kBaseline, kBaseline, "--max", "step_time=+5%"});
  EXPECT_EQ(r.exit_code, 2);
  expect_contains(r.output, "no figure 'step_time': the known figures are step_ms");
  r = run_llmprof({"check", kBaseline, kBaseline, "--max", "step_ms=five"});
  EXPECT_EQ(r.exit_code, 2);
  expect_contains(r.output, "'five' is not an amount");
  r = run_llmprof({"check", kBaseline, kBaseline, "--max", "tokens_per_s=+5%"});
  EXPECT_EQ(r.exit_code, 2);
  expect_contains(r.output, "bound it with --min tokens_per_s");
  r = run_llmprof({"check", kBaseline, kBaseline, "--format", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  expect_contains(r.output, "--format xml: expected text, md, json or junit");
}

// Input no rerun fixes exits 2, not 4 ("rerun"): a step the run never trains, commands that write
// no run, fewer rounds than a 95% interval needs (named).
TEST(CheckCli, InputNoRerunFixesExitsTwo) {
  auto r = run_llmprof({"check", kBaseline, kBaseline, "--within", "loss@99=1e-4"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "loss@99: " + kBaseline + " trains 20 steps");
  r = run_llmprof({"check", "--ab", "echo hi", "echo ho", "--repetitions", "6"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "the baseline command `echo hi` exited 0 but wrote no run directory");
  r = run_llmprof({"check", "--ab", "false", "false", "--repetitions", "5"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "--repetitions 5: at least 6 are needed");
}

// Exit 4 from the command line, deterministically: a gated figure the candidate run has no value
// of (null, with the reason) is inconclusive, neither a pass nor a regression.
TEST(CheckCli, AFigureWithoutAValueExitsFour) {
  ScratchDir dir("check-cli");
  const std::string cand = dir.file("cand");
  std::filesystem::copy(kBaseline, cand);
  auto summary = nlohmann::json::parse(test::read_file(cand + "/summary.json"));
  summary["loss"]["final_val_loss"] = nullptr;
  test::write_file(cand + "/summary.json", summary.dump(2));
  const auto r = run_llmprof(
      {"check", kBaseline, cand, "--max", "val_loss=+0.02", "--within", "parameters=0"});
  EXPECT_EQ(r.exit_code, 4) << r.output;
  expect_contains(r.output, "pass         parameters=0");
  expect_contains(r.output, "/loss/final_val_loss is null or absent");
  expect_contains(r.output, "INCONCLUSIVE: 1 passed, 0 failed, 1 inconclusive");
}

// Two sweep directories point by point: the same sweep run twice has the same losses at every
// point (one thread, one seed); a run against a sweep is bad input.
TEST(CheckCli, TwoSweepDirectoriesAreComparedPointByPoint) {
  ScratchDir dir("check-cli");
  for (const char* name : {"a", "b"}) {
    const auto s =
        run_llmprof({"sweep", "--config", test::kTinyConfig, "--grid", "train.batch_size=2,4",
                     "--set", "schedule.max_steps=3", "--set", "train.eval_interval=0", "--set",
                     "threads=1", "--out", dir.path(), "--name", name, "--quiet"});
    ASSERT_EQ(s.exit_code, 0) << s.output;
  }
  auto r = run_llmprof(
      {"check", dir.file("a"), dir.file("b"), "--within", "loss@3=0", "--max", "step_ms=+5%"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "pass         loss@3=0 @ p001-train.batch_size=2-r1");
  expect_contains(r.output, "pass         loss@3=0 @ p002-train.batch_size=4-r1");
  expect_contains(r.output, "reported     step_ms=+5% @ p002-train.batch_size=4-r1");
  expect_contains(r.output, "PASS: 2 passed, 0 failed, 0 inconclusive, 2 reported");
  r = run_llmprof({"check", kBaseline, dir.file("b")});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "compare a run with a run, a sweep with a sweep");
}

TEST(CheckCli, RegressionExitsThreeAndAppendsTheStepSummary) {
  ScratchDir dir("check-cli");
  const std::string cand = dir.file("cand");
  std::filesystem::copy(kBaseline, cand);
  // The candidate's loss at step 20 moved by 0.01: beyond a 1e-3 tolerance.
  std::string steps = test::read_file(cand + "/steps.csv");
  const size_t at = steps.find("\n20,");
  ASSERT_NE(at, std::string::npos);
  const size_t comma = steps.find(',', at + 4);
  const double loss = std::stod(steps.substr(at + 4, comma - at - 4));
  steps.replace(at + 4, comma - at - 4, std::to_string(loss + 0.01));
  test::write_file(cand + "/steps.csv", steps);
  ::setenv("GITHUB_STEP_SUMMARY", dir.file("summary.md").c_str(), 1);
  const auto r = run_llmprof({"check", kBaseline, cand, "--within", "loss@20=1e-3"});
  ::unsetenv("GITHUB_STEP_SUMMARY");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_contains(r.output, "REGRESSION: 0 passed, 1 failed");
  expect_contains(test::read_file(dir.file("summary.md")), "| **fail** |");
}

TEST(CheckCli, AbOfIdenticalCommandsNeverFails) {
  ScratchDir dir("check-cli");
  const std::string cmd = test::llmprof_binary() + " train --config " + test::kTinyConfig +
                          " --set schedule.max_steps=6 --set train.eval_interval=0";
  const auto r =
      run_llmprof({"check", "--ab", cmd, cmd, "--repetitions", "6", "--max", "step_ms=+50%",
                   "--within", "loss@6=0", "--format", "junit", "--out", dir.file("check.xml")});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.output;  // timing: never a failure
  const std::string xml = test::read_file(dir.file("check.xml"));
  expect_contains(xml, "testsuites name=\"llmprof check\" tests=\"2\" failures=\"0\"");
  expect_contains(r.output, "pass         loss@6=0");
  expect_contains(r.output, "96.9% interval");  // the confidence 6 pairs achieve
}

TEST(CheckCli, AbOfTwoSweepsJudgesEveryPoint) {
  ScratchDir dir("check-cli");
  // Two points (batch 2 and 4) x two gates, six rounds: --out and --name go to the sweep. Holm's
  // first level over 2 points x 1 timing gate is 0.0125, which 6 pairs (p >= 1/64) cannot reach:
  // the timing gates are inconclusive, saying so, and the check exits 4 whatever the timings.
  const std::string cmd = test::llmprof_binary() + " sweep --config " + test::kTinyConfig +
                          " --grid train.batch_size=2,4 --set schedule.max_steps=3" +
                          " --set train.eval_interval=0 --quiet";
  const auto r =
      run_llmprof({"check", "--ab", cmd, cmd, "--repetitions", "6", "--max", "step_ms=+1000%",
                   "--within", "loss@3=0", "--format", "json", "--out", dir.file("check.json")});
  EXPECT_EQ(r.exit_code, 4) << r.output;
  expect_contains(r.output,
                  "6 pairs cannot reach Holm's first level 0.013 (p >= 2^-6): 7 rounds can");
  expect_contains(r.output, "pass         loss@3=0 @ p001-train.batch_size=2-r1");
  expect_contains(r.output, "pass         loss@3=0 @ p002-train.batch_size=4-r1");
  expect_contains(r.output, "step_ms=+1000% @ p002-train.batch_size=4-r1");
  expect_contains(r.output, "Holm over 2 comparisons: 2 points x timing gates");
  const std::string json = test::read_file(dir.file("check.json"));
  expect_contains(json, "\"point\": \"p001-train.batch_size=2-r1\"");
  expect_contains(json, "\"point\": \"p002-train.batch_size=4-r1\"");
}

TEST(CheckCli, AbCommandThatFailsExitsOneWithItsLog) {
  const auto r = run_llmprof({"check", "--ab", "false", "false", "--repetitions", "6"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "the baseline repetition 1 failed (exit 1)");
}

}  // namespace
}  // namespace llmprof
