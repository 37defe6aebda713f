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
#include <set>
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
      {{"tune", "-c", cfg, "--objective", "joules"}, "--objective joules"},
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

// A CUDA device named for the tiny CPU config: the space is the device's (CUDA graphs, the fused
// loss, the caching allocator's expandable segments, each keeping the numerics), every candidate
// is planned against its memory, and what the config cannot train on its CPU is unmeasured,
// saying why. Asked to measure only such knobs, tune exits 2 before running anything.
TEST(TuneCli, ANamedGpuPlansItsOwnKnobsAndLeavesThemUnmeasuredOnACpuConfig) {
  ScratchDir dir("tune");
  const auto r = run_llmprof({"tune", "-c", test::kTinyConfig, "--device", "h100-80gb",
                              "--plan-only", "--out", dir.file("t")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = tune_json(dir.file("t"));
  bool knob = false;
  for (const json& k : doc["knobs"]) {
    if (k["key"] != "train.cuda_expandable_segments") continue;
    knob = true;
    EXPECT_EQ(k["numerics"], "kept");
  }
  EXPECT_TRUE(knob) << doc["knobs"].dump(1);
  const json& segments = by_sets(doc, {"train.cuda_expandable_segments=true"});
  EXPECT_EQ(segments["outcome"], "unmeasured");
  EXPECT_EQ(segments["planned_fits"], true);
  expect_contains(segments["reason"], "not on the config's device: train.cuda_expandable_segments");
  expect_contains(by_sets(doc, {"model.fused_loss=true"})["reason"], "needs device=cuda");
  expect_contains(doc["notes"].dump(), "--device h100-80gb: the space and the plans are the CUDA");
  const auto only_gpu =
      run_llmprof({"tune", "-c", test::kTinyConfig, "--device", "h100-80gb", "--space",
                   "train.cuda_expandable_segments=true", "--out", dir.file("g")});
  EXPECT_EQ(only_gpu.exit_code, 2) << only_gpu.output;
  expect_contains(only_gpu.output, "nothing to measure here");
  EXPECT_FALSE(fs::exists(dir.file("g/trials"))) << "a repetition ran";
}

// --objective energy_per_token on a machine without an energy source (RAPL looked for under an
// empty sysfs, NVML at a path with no library, no cpu_tdp_w estimate): exit 2 before anything
// runs, naming each source tried and why it gave nothing. Energy off and ranks that share the
// host's sensors are refused the same way.
TEST(TuneCli, EnergyPerTokenWithoutAnEnergySourceExitsTwoNamingTheSourcesTried) {
  ScratchDir dir("tune");
  std::filesystem::create_directories(dir.file("sys"));
  const std::vector<std::string> no_sensor = {
      "tune",
      "-c",
      test::kTinyConfig,
      "--objective",
      "energy_per_token",
      "--set",
      "energy.sysfs_root=" + dir.file("sys"),
      "--set",
      "energy.nvml_library=" + dir.file("no-libnvidia-ml.so"),
      "--out",
      dir.file("t")};
  const auto r = run_llmprof(no_sensor);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "--objective energy_per_token: no energy sensor available (rapl: ");
  expect_contains(r.output, "; nvml: ");
  expect_contains(r.output, "energy.cpu_tdp_w = 0");
  EXPECT_FALSE(fs::exists(dir.file("t"))) << "the refused search wrote its directory";
  auto off = no_sensor;
  off.insert(off.end(), {"--set", "energy.enabled=false"});
  const auto r_off = run_llmprof(off);
  EXPECT_EQ(r_off.exit_code, 2) << r_off.output;
  expect_contains(r_off.output, "energy.enabled=false");
  auto ranks = no_sensor;
  ranks.insert(ranks.end(), {"--nproc", "2"});
  const auto r_ranks = run_llmprof(ranks);
  EXPECT_EQ(r_ranks.exit_code, 2) << r_ranks.output;
  expect_contains(r_ranks.output, "--objective energy_per_token with --nproc 2");
}

// The objective measured: each repetition's energy comes from a fake NVML library (GPU 1 draws a
// constant 75 W by power readings; GPU 0's energy counter stands still and its 150 W bridges at
// most the tail past the counter's last read), so a run's joules lie between 75 W x its steps'
// sleep and 225 W x its wall time. The start sleeps 30 ms in each of 8 steps of 4 x 32 tokens,
// the candidate not at all: under constant power the candidate uses less energy per token.
TEST(TuneCli, EnergyPerTokenRacesTheJoulesOfTheEnergySource) {
#if !defined(LLMPROF_FAKE_NVML_FULL)
  GTEST_SKIP() << "no fake NVML library in this build (tests/telemetry is not built)";
#else
  ScratchDir dir("tune");
  std::filesystem::create_directories(dir.file("sys"));
  const std::string out = dir.file("t");
  const auto r =
      run_llmprof({"tune", "-c", test::kTinyConfig, "--objective", "energy_per_token", "--set",
                   "train.test_step_sleep_ms=30", "--set", "energy.sysfs_root=" + dir.file("sys"),
                   "--set", std::string("energy.nvml_library=") + LLMPROF_FAKE_NVML_FULL, "--space",
                   "train.test_step_sleep_ms=0", "--steps", "8", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = tune_json(out);
  EXPECT_EQ(doc["inputs"]["figure"], "energy_j_per_token");
  expect_contains(doc["notes"].dump(), "energy from nvml");
  const json& fast = by_sets(doc, {"train.test_step_sleep_ms=0"});
  EXPECT_EQ(doc["winner"], fast["id"]) << doc["conclusion"];
  expect_contains(doc["conclusion"], "uses less energy per token than the start");
  EXPECT_LT(fast["ratio"].get<double>(), 1);
  const double tokens = 8 * 4 * 32;
  ASSERT_EQ(fast["repetitions"].size(), 12u);
  for (const json& rep : fast["repetitions"]) {
    const double joules = rep["figure"].get<double>() * tokens;
    EXPECT_LE(joules, 225 * rep["seconds"].get<double>()) << rep.dump();
    if (rep["arm"] == "baseline") EXPECT_GE(joules, 75 * 8 * 0.030) << rep.dump();
    EXPECT_GT(joules, 0) << rep.dump();
  }
  expect_contains(test::read_file(out + "/tune.md"), "J/token");
#endif
}

// --nproc 2: every repetition is a data-parallel run of two rank processes, which tune.json
// records per repetition (the rank<k>/ directories each run wrote) beside the search's inputs.
TEST(TuneCli, NprocTrialsTrainEveryRank) {
  if (const std::string why = test::why_two_ranks_cannot_run(); !why.empty()) {
    GTEST_SKIP() << "this environment cannot run two ranks: " << why;
  }
  ScratchDir dir("tune");
  const std::string out = dir.file("t");
  const auto r = run_llmprof({"tune", "-c", test::kTinyConfig, "--space",
                              "train.test_step_sleep_ms=0", "--set", "train.test_step_sleep_ms=5",
                              "--nproc", "2", "--steps", "5", "--budget", "30s", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = tune_json(out);
  EXPECT_EQ(doc["inputs"]["nproc"], 2);
  ASSERT_EQ(doc["candidates"].size(), 1u);
  std::set<std::string> arms;
  for (const json& rep : doc["candidates"][0]["repetitions"]) {
    EXPECT_EQ(rep["ranks"], 2) << rep.dump();
    arms.insert(rep["arm"].get<std::string>());
    EXPECT_TRUE(fs::exists(rep["log"].get<std::string>())) << rep.dump();
  }
  EXPECT_EQ(arms, (std::set<std::string>{"baseline", "candidate"})) << doc.dump(1);
}

}  // namespace
}  // namespace llmprof
