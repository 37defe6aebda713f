// `llmprof tune` as a user runs it, on the tiny config where the answer is known by construction:
// the start sleeps 30 ms a step (train.test_step_sleep_ms, a test-only key), one candidate 0 ms
// and one 150 ms; a batch of 65536 does not fit 1 GB. tune finds the 0 ms candidate, drops the
// 150 ms one after its first rung, never runs what the planner rejects; a killed search resumes
// without measuring anything twice; bad input exits 2 naming what is wrong.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/test_support.h"

namespace llmprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::expect_contains;
using test::run_llmprof;
using test::ScratchDir;

std::vector<std::string> tune_args(const std::string& out, std::vector<std::string> more = {}) {
  std::vector<std::string> a = {"tune",
                                "--config",
                                test::kTinyConfig,
                                "--set",
                                "train.test_step_sleep_ms=30",
                                "--space",
                                "train.test_step_sleep_ms=0,150",
                                "--space",
                                "train.batch_size=4,65536",
                                "--device",
                                "1GB",
                                "--steps",
                                "8",
                                "--out",
                                out};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

json tune_json(const std::string& dir) { return json::parse(test::read_file(dir + "/tune.json")); }

const json& by_sets(const json& doc, const std::vector<std::string>& sets) {
  for (const json& c : doc["candidates"]) {
    if (c["sets"].get<std::vector<std::string>>() == sets) return c;
  }
  throw std::runtime_error("no candidate with those sets");
}

int64_t repetitions(const json& doc) {
  int64_t n = 0;
  for (const json& c : doc["candidates"]) n += static_cast<int64_t>(c["repetitions"].size());
  return n;
}

TEST(TuneCli, FindsTheKnownFastestDropsTheSlowAndNeverRunsWhatDoesNotFit) {
  ScratchDir dir("tune");
  const std::string out = dir.file("t");
  const auto r = run_llmprof(tune_args(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = tune_json(out);
  ASSERT_EQ(doc["candidates"].size(), 5u) << doc.dump(1);  // 2 that fit, 3 with the batch
  const json& fast = by_sets(doc, {"train.test_step_sleep_ms=0"});
  const json& slow = by_sets(doc, {"train.test_step_sleep_ms=150"});
  EXPECT_EQ(doc["winner"], fast["id"]) << doc["conclusion"];
  EXPECT_EQ(fast["outcome"], "winner");
  EXPECT_EQ(fast["verdict"], "faster");
  EXPECT_EQ(fast["rounds"], 6);
  EXPECT_EQ(slow["outcome"], "dropped");
  EXPECT_EQ(slow["repetitions"].size(), 12u);  // its first rung: 6 rounds (the fewest), both arms
  for (const json& c : doc["candidates"]) {
    const auto sets = c["sets"].get<std::vector<std::string>>();
    if (std::find(sets.begin(), sets.end(), "train.batch_size=65536") == sets.end()) continue;
    EXPECT_EQ(c["outcome"], "does_not_fit") << c.dump();
    EXPECT_EQ(c["planned_fits"], false);
    EXPECT_TRUE(c["repetitions"].empty());
    for (const auto& e : fs::directory_iterator(out + "/trials")) {
      EXPECT_NE(
          e.path().filename().string().rfind("c" + std::to_string(c["id"].get<int>()) + "-", 0), 0u)
          << e.path();
    }
  }
  expect_contains(doc["planner_check"], "3 planned not to fit (not run)");
  expect_contains(test::read_file(out + "/tuned.yaml"), "\n  test_step_sleep_ms: 0 ");
  expect_contains(test::read_file(out + "/tune.md"), "| winner |");
  expect_contains(r.output, "candidates left");
  expect_contains(test::read_file(out + "/tune.svg"), " winner</text>");
  expect_contains(test::read_file(out + "/tune.html"), "<svg");
  // A run trained from tuned.yaml: its report links back to the search.
  const auto train =
      run_llmprof({"train", "--config", out + "/tuned.yaml", "--set", "schedule.max_steps=3",
                   "--set", "output.dir=" + dir.path(), "--set", "output.name=tuned", "--quiet"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto report = run_llmprof({"report", dir.file("tuned")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  expect_contains(report.output,
                  "trained from the tuned.yaml of `llmprof tune`: " + out + "/tune.json");
}

TEST(TuneCli, AKilledSearchResumesWithoutMeasuringAnythingTwice) {
  ScratchDir dir("tune");
  const std::string out = dir.file("t");
  const int pid = test::spawn_llmprof(tune_args(out), dir.file("first.log"));
  json before;
  for (int i = 0; i < 600; ++i) {  // until 3 repetitions are saved (at most 60 s)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!fs::exists(out + "/tune.json")) continue;
    try {
      before = tune_json(out);
    } catch (const json::exception&) {
      continue;
    }
    if (repetitions(before) >= 3) break;
  }
  ::kill(pid, SIGKILL);
  test::wait_llmprof(pid);
  before = tune_json(out);
  const int64_t saved = repetitions(before);
  ASSERT_GE(saved, 3);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the orphaned repetition ends
  const auto r = run_llmprof(tune_args(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json after = tune_json(out);
  int64_t measured_now = 0;  // progress lines: one before each repetition measured
  for (const char* arm : {": baseline round ", ": candidate round "}) {
    for (size_t at = r.output.find(arm); at != std::string::npos; at = r.output.find(arm, at + 1)) {
      ++measured_now;
    }
  }
  EXPECT_EQ(repetitions(after), saved + measured_now) << r.output;
  for (const json& c : before["candidates"]) {  // what was saved stays as it was
    const json& now = by_sets(after, c["sets"].get<std::vector<std::string>>());
    for (size_t i = 0; i < c["repetitions"].size(); ++i) {
      EXPECT_EQ(now["repetitions"][i]["figure"], c["repetitions"][i]["figure"]);
    }
  }
  EXPECT_EQ(after["winner"], by_sets(after, {"train.test_step_sleep_ms=0"})["id"]);
}

TEST(TuneCli, BadInputExitsTwoNamingWhatIsWrong) {
  ScratchDir dir("tune");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::string cfg = test::kTinyConfig;
  const std::vector<Case> cases = {
      {{"tune", "-c", cfg, "--space", "thread=1,2"}, "threads"},
      {{"tune", "-c", cfg, "--space", "train.precision=fp32,fp8"}, "fp8"},
      {{"tune", "-c", cfg, "--space", "train.batch_size=65536", "--device", "1GB"},
       "nothing in the space fits"},
      {{"tune", "-c", cfg, "--objective", "energy_per_token"}, "energy_per_token"},
      {{"tune", "-c", cfg, "--budget", "20x"}, "--budget 20x"},
      {{"tune", "-c", cfg, "--space", "train.test_step_sleep_ms=0", "--set",
        "train.test_step_sleep_ms=300", "--budget", "1s", "--steps", "8"},
       "--budget 1s"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--out", dir.file("bad" + std::to_string(i))});
    const auto r = run_llmprof(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    expect_contains(r.output, c.says);
  }
}

}  // namespace
}  // namespace llmprof
