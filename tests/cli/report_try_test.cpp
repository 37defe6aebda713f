// `llmprof report --try RUN` as a user runs it: each suggested --set measured by an A/B of short
// trainings (6 rounds, the fewest a 95% interval needs, of 4 steps of the tiny config), the
// verdicts in RUN/tried.json and in every later report of RUN; bad --try arguments exit 2 naming
// the flag.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace llmprof {
namespace {

using test::run_llmprof;
using test::expect_contains;
using test::ScratchDir;

const std::string& kTiny = test::kTinyConfig;

// A tiny run of 5 steps, 1 of warm-up: its findings suggest at least train.batch_size=8.
std::string tiny_run(const ScratchDir& dir) {
  auto r = run_llmprof({"train", "--config", kTiny, "--set", "output.dir=" + dir.path(), "--set",
                        "output.name=run", "--set", "schedule.max_steps=5", "--set",
                        "profile.warmup_steps=1", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return dir.file("run");
}

TEST(ReportTry, MeasuresEachSuggestedSetAndKeepsTheVerdicts) {
  ScratchDir dir("report_try");
  const std::string run = tiny_run(dir);
  // The default number of rounds: 6.
  auto r = run_llmprof({"report", "--try", run, "--try-steps", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output,
                  "`--set train.batch_size=8`: 6 rounds of baseline and candidate, 4 "
                  "steps each (step_us_per_token)");
  expect_contains(r.output, "[1/12] baseline 1: ");
  expect_contains(r.output, "[2/12] candidate 1: ");
  expect_contains(r.output, "[3/12] candidate 2: ");
  expect_contains(r.output, "tried.json written");
  const auto j = nlohmann::json::parse(test::read_file(run + "/tried.json"));
  EXPECT_EQ(j["schema_version"], 1);
  bool batch = false;
  for (const auto& t : j["tried"]) {
    EXPECT_EQ(t["steps"], 4);
    EXPECT_EQ(t["baseline"].size(), 6u) << t.dump();
    EXPECT_EQ(t["candidate"].size(), 6u) << t.dump();
    ASSERT_TRUE(t["verdict"].is_string()) << t.dump();  // each set ran: tiny takes every one
    EXPECT_TRUE(t["ci_low"].get<double>() <= t["ci_high"].get<double>());
    EXPECT_DOUBLE_EQ(t["confidence"].get<double>(), 62.0 / 64);  // achieved at 6 pairs
    expect_contains(t["command"].get<std::string>(), "--repetitions 6");
    batch = batch || t["set"] == "train.batch_size=8";
  }
  EXPECT_TRUE(batch) << j.dump(2);
  expect_contains(r.output, "`--set train.batch_size=8` tried: ");  // the report that follows
  // The scratch trainings are gone; a later report of the run still shows the verdict.
  EXPECT_FALSE(std::filesystem::exists(run + "/try1-baseline-1"));
  auto later = run_llmprof({"report", run, "--format", "html"});
  ASSERT_EQ(later.exit_code, 0) << later.output;
  expect_contains(later.output, "<code>--set train.batch_size=8</code> tried: ");
}

TEST(ReportTry, BadArgumentsExitTwoNamingTheFlag) {
  ScratchDir dir("report_try");
  const std::string run = tiny_run(dir);
  auto few = run_llmprof({"report", "--try", run, "--repetitions", "5"});
  EXPECT_EQ(few.exit_code, 2);
  expect_contains(few.output, "--repetitions 5: at least 6 are needed for a 95% interval");
  auto short_run = run_llmprof({"report", "--try", run, "--try-steps", "3"});
  EXPECT_EQ(short_run.exit_code, 2);
  expect_contains(short_run.output,
                  "--try-steps 3: the run's profile.warmup_steps = 1 leaves "
                  "fewer than 3 measured steps; give at least 4");
  auto missing = run_llmprof({"report", "--try", dir.file("nope")});
  EXPECT_EQ(missing.exit_code, 2);
  expect_contains(missing.output, "nope");
  EXPECT_FALSE(std::filesystem::exists(run + "/tried.json"));
}

// The run's own config no longer trains (here: model.n_layer 0 is out of range): the baseline
// fails, --try stops with exit 1 naming it, instead of recording every set as not measured.
TEST(ReportTry, ABaselineThatCannotTrainStopsWithExitOne) {
  ScratchDir dir("report_try");
  const std::string run = tiny_run(dir);
  std::string config = test::read_file(run + "/config.yaml");
  const size_t at = config.find("n_layer: 2");
  ASSERT_NE(at, std::string::npos) << config;
  config.replace(at, 10, "n_layer: 0");
  test::write_file(run + "/config.yaml", config);
  auto r = run_llmprof({"report", "--try", run, "--try-steps", "4"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output,
                  "--try: the run's own config does not train from here: A/B: the "
                  "baseline repetition 1 failed (exit 2)");
  expect_contains(r.output, "model.n_layer");
  // The scratch directory stays for its logs (the message names it): remove it here.
  const size_t log = r.output.find("(log ");
  ASSERT_NE(log, std::string::npos) << r.output;
  const std::string path = r.output.substr(log + 5, r.output.find(')', log) - log - 5);
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

}  // namespace
}  // namespace llmprof
