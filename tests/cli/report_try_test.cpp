// `llmprof report --try RUN` as a user runs it: each suggested --set measured by an A/B of short
// trainings (6 rounds, the fewest a 95% interval needs, of 4 steps of the tiny config), the
// verdicts in RUN/tried.json and in every later report of RUN; bad --try arguments exit 2 naming
// the flag; a run saved with checkpoints or resumed from one is tried as a fresh run; a two-rank
// run's trials train two rank processes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace llmprof {
namespace {

using test::expect_contains;
using test::run_llmprof;
using test::ScratchDir;

const std::string& kTiny = test::kTinyConfig;

// A tiny run of 5 steps, 1 of warm-up: its findings suggest at least train.batch_size=8. `more`:
// further train arguments (--set key=value, --nproc N).
std::string tiny_run(const ScratchDir& dir,
                     const std::vector<std::string>& more = {},
                     const std::string& name = "run") {
  std::vector<std::string> args = {"train",
                                   "--config",
                                   kTiny,
                                   "--set",
                                   "output.dir=" + dir.path(),
                                   "--set",
                                   "output.name=" + name,
                                   "--set",
                                   "schedule.max_steps=5",
                                   "--set",
                                   "profile.warmup_steps=1",
                                   "--quiet"};
  args.insert(args.end(), more.begin(), more.end());
  auto r = run_llmprof(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return dir.file(name);
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every entry of RUN/tried.json has a verdict (each set was measured) at world size `ranks`;
// whether train.batch_size=8 is among them.
bool every_set_measured(const std::string& run, int ranks) {
  const auto j = nlohmann::json::parse(test::read_file(run + "/tried.json"));
  bool batch = false;
  for (const auto& t : j["tried"]) {
    EXPECT_TRUE(t["verdict"].is_string()) << t.dump();
    EXPECT_EQ(t["world_size"], ranks) << t.dump();
    EXPECT_EQ(t["launcher"], ranks == 1 ? "none" : "nproc") << t.dump();
    batch = batch || t["set"] == "train.batch_size=8";
  }
  return batch;
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

// The issue's case: a run saved with train.checkpoint_interval failed every trial (checkpointing
// turned off, the interval kept: a validation error, exit 1). A trial saves no checkpoints.
TEST(ReportTry, ARunSavedWithACheckpointIntervalIsTried) {
  ScratchDir dir("report_try");
  const std::string run = tiny_run(
      dir, {"--set", "train.save_checkpoint=true", "--set", "train.checkpoint_interval=2"});
  ASSERT_TRUE(std::filesystem::exists(run + "/checkpoint-step2"));
  auto r = run_llmprof({"report", "--try", run, "--repetitions", "6", "--try-steps", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("not measured"), std::string::npos) << r.output;
  EXPECT_TRUE(every_set_measured(run, 1));
}

// A resumed run's trials do not resume: the batch suggestion, which a resumed run refuses (its
// checkpoint was trained at another batch size), is measured.
TEST(ReportTry, AResumedRunIsTriedAsAFreshRun) {
  ScratchDir dir("report_try");
  const std::string first = tiny_run(
      dir, {"--set", "train.save_checkpoint=true", "--set", "train.checkpoint_interval=2"});
  const std::string resumed =
      tiny_run(dir, {"--set", "train.resume_from=" + first + "/checkpoint-step2"}, "resumed");
  expect_contains(test::read_file(resumed + "/config.yaml"), "checkpoint-step2");
  auto r = run_llmprof({"report", "--try", resumed, "--repetitions", "6", "--try-steps", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("not measured"), std::string::npos) << r.output;
  EXPECT_TRUE(every_set_measured(resumed, 1)) << r.output;
}

// The issue's case: `report --try` on a two-rank run trained one process per arm and kept the
// verdict. Each arm now trains the run's two rank processes (counted from each repetition's
// rank0/ and rank1/), tried.json says so, and a verdict measured with one process is dropped from
// the next report and from the file.
TEST(ReportTry, ATwoRankRunsTrialsTrainTwoRankProcessesPerArm) {
  ScratchDir dir("report_try");
  const std::string run = tiny_run(dir, {"--nproc", "2"});
  if (!std::filesystem::exists(run + "/rank1/summary.json")) {
    GTEST_SKIP() << "this llmprof has no distributed training (--nproc 2 wrote no rank1/)";
  }
  test::write_file(run + "/tried.json", R"({"schema_version": 1, "tried": [{
    "set": "train.batch_size=8", "rules": ["low_mfu_small_batch"], "figure": "step_us_per_token",
    "steps": 4, "baseline": [1, 1, 1], "candidate": [1.35, 1.35, 1.35], "error": "", "time": "t",
    "command": "llmprof report --try run", "verdict": "slower", "pairs": 3,
    "baseline_median": 1, "candidate_median": 1.35, "ratio_of_medians": 1.35,
    "median_paired_ratio": 1.35, "confidence": 0.95, "ci_low": 1.3, "ci_high": 1.4}]})");
  auto report = run_llmprof({"report", run});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  expect_contains(report.output,
                  "`--set train.batch_size=8` tried: not measured: a verdict (slower) measured "
                  "with one process for this run of 2 ranks is dropped");
  EXPECT_EQ(report.output.find("slower, not advised"), std::string::npos) << report.output;

  auto r = run_llmprof({"report", "--try", run, "--repetitions", "6", "--try-steps", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t tries = count_of(r.output,
                                "rounds of baseline and candidate, 4 steps each, 2 "
                                "ranks per arm (--nproc 2)");
  EXPECT_GE(tries, 1u) << r.output;
  EXPECT_EQ(count_of(r.output, " (2 rank processes)\n"), 12 * tries) << r.output;
  EXPECT_TRUE(every_set_measured(run, 2)) << r.output;
  expect_contains(r.output, "`--set train.batch_size=8` tried: ");
  expect_contains(r.output, "steps each, step time per token, 2 ranks)");
}

}  // namespace
}  // namespace llmprof
