// llmprof check as a CI job runs it: exit codes 0/3/4/2/1, bad input named, the step summary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

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
  const auto r = run_llmprof({"check", "--ab", cmd, cmd, "--repetitions", "3", "--max",
                              "step_ms=+50%", "--within", "loss@6=0", "--format", "junit",
                              "--out", dir.file("check.xml")});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.output;
  const std::string xml = test::read_file(dir.file("check.xml"));
  expect_contains(xml, "testsuites name=\"llmprof check\" tests=\"2\" failures=\"0\"");
  expect_contains(r.output, "pass         loss@6=0");
}

TEST(CheckCli, AbOfTwoSweepsJudgesEveryPoint) {
  ScratchDir dir("check-cli");
  // Two points (batch 2 and 4) x two gates, two rounds: --out and --name go to the sweep.
  const std::string cmd = test::llmprof_binary() + " sweep --config " + test::kTinyConfig +
                          " --grid train.batch_size=2,4 --set schedule.max_steps=3" +
                          " --set train.eval_interval=0 --quiet";
  const auto r = run_llmprof({"check", "--ab", cmd, cmd, "--repetitions", "2", "--max",
                              "step_ms=+1000%", "--within", "loss@3=0", "--format", "json",
                              "--out", dir.file("check.json")});
  // Three steps on a shared machine: timing may span even an 11x bound, never fail it.
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.output;
  expect_contains(r.output, "pass         loss@3=0 @ p001-train.batch_size=2-r1");
  expect_contains(r.output, "pass         loss@3=0 @ p002-train.batch_size=4-r1");
  expect_contains(r.output, "step_ms=+1000% @ p002-train.batch_size=4-r1");
  expect_contains(r.output, "Holm over 2 comparisons: 2 points x timing gates");
  const std::string json = test::read_file(dir.file("check.json"));
  expect_contains(json, "\"point\": \"p001-train.batch_size=2-r1\"");
  expect_contains(json, "\"point\": \"p002-train.batch_size=4-r1\"");
}

TEST(CheckCli, AbCommandThatFailsExitsOneWithItsLog) {
  const auto r = run_llmprof({"check", "--ab", "false", "false", "--repetitions", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "the baseline repetition 1 failed (exit 1)");
}

}  // namespace
}  // namespace llmprof
