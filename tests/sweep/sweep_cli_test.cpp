// llmprof sweep as a user runs it, on the tiny config (~1 s a point): a 2x2 sweep end to end,
// up-front errors (exit 2, nothing run), a failing point recorded while the sweep goes on,
// resume after SIGINT, SIGTERM and SIGKILL, re-running failed points only, --jobs splitting
// threads, and the lock that keeps a second sweep out of a directory in use.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "llmprof/output/csv.h"
#include "support/csv_rows.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof {
namespace {

using test::expect_contains;
using test::run_llmprof;
using test::ScratchDir;
using Row = test::CsvRow;
using test::csv_rows;

const std::string& kTiny = test::kTinyConfig;

// `sweep --config tiny --out DIR --name s --quiet` plus extra arguments.
std::vector<std::string> sweep_args(const ScratchDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> args{"sweep",    "--config", kTiny, "--out",
                                dir.path(), "--name",   "s",   "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(test::read_file(path));
}

const std::vector<std::string> k2x2 = {"--grid", "train.batch_size=2,4", "--grid",
                                       "optim.lr=1e-3,3e-3"};

TEST(SweepCommand, TwoByTwoWritesFourCompletedRowsAndSweepJson) {
  ScratchDir dir;
  auto r = run_llmprof(sweep_args(dir, k2x2));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "4 completed");
  const std::string s = dir.file("s");
  auto rows = csv_rows(s + "/sweep.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["point_id"], "p001-train.batch_size=2-optim.lr=0.001-r1");
  EXPECT_EQ(rows[3]["train.batch_size"], "4");
  EXPECT_EQ(rows[3]["optim.lr"], "0.003");
  for (auto& row : rows) {
    EXPECT_EQ(row["status"], "completed") << row["point_id"];
    EXPECT_EQ(row["exit_code"], "0");
    EXPECT_FALSE(row["median_step_ms"].empty());
    EXPECT_FALSE(row["final_val_loss"].empty());
    // Empty where no sensor is available (never 0); a GPU host's NVML measures it.
    if (!row["energy_j"].empty()) EXPECT_GT(std::stod(row["energy_j"]), 0);
    EXPECT_TRUE(fs::exists(row["run_dir"] + "/summary.json")) << row["run_dir"];
    EXPECT_TRUE(fs::exists(s + "/runs/" + row["point_id"] + ".log"));
  }
  auto j = read_json(s + "/sweep.json");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["status"], "finished");
  EXPECT_EQ(j["base_config"], kTiny);
  EXPECT_EQ(j["grid"][0]["key"], "train.batch_size");
  EXPECT_EQ(j["grid"][1]["values"], (std::vector<std::string>{"0.001", "0.003"}));
  EXPECT_EQ(j["jobs"], 1);
  EXPECT_EQ(j["threads_per_point"], j["cores"]);
  EXPECT_EQ(j["points"].size(), 4u);
  EXPECT_EQ(j["command_line"][1], "sweep");
  EXPECT_FALSE(j["start_time"].get<std::string>().empty());
  // The point ran with the sweep's settings: threads split, its values, its own directory.
  auto cfg = test::read_file(rows[3]["run_dir"] + "/config.yaml");
  expect_contains(cfg, "batch_size: 4");
  expect_contains(cfg, "lr: 0.003");
}

TEST(SweepCommand, CliGridReplacesTheFileGridKey) {
  ScratchDir dir;
  test::write_file(dir.file("base.yaml"), test::read_file(kTiny) +
                                              "sweep:\n  grid:\n    train.batch_size: [2, 4]\n"
                                              "    schedule.max_steps: [10]\n");
  auto r = run_llmprof({"sweep", "--config", dir.file("base.yaml"), "--out", dir.path(), "--quiet",
                        "--grid", "train.batch_size=3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto rows = csv_rows(dir.file("sweep-base/sweep.csv"));  // default name: sweep-<config stem>
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["train.batch_size"], "3");
  EXPECT_EQ(rows[0]["schedule.max_steps"], "10");
}

TEST(SweepCommand, BadKeyOrValueExitsTwoBeforeAnythingRuns) {
  ScratchDir dir;
  auto key = run_llmprof(sweep_args(dir, {"--grid", "optim.lrr=1e-3,3e-3"}));
  EXPECT_EQ(key.exit_code, 2) << key.output;
  expect_contains(key.output, "'optim.lrr'");
  expect_contains(key.output, "did you mean 'optim.lr'");
  auto value = run_llmprof(sweep_args(dir, {"--grid", "train.batch_size=8,big"}));
  EXPECT_EQ(value.exit_code, 2) << value.output;
  expect_contains(value.output, "train.batch_size");
  expect_contains(value.output, "big");
  auto cross = run_llmprof(sweep_args(dir, {"--grid", "model.n_head=2,3"}));
  EXPECT_EQ(cross.exit_code, 2) << cross.output;
  expect_contains(cross.output, "model.n_head: 3 does not divide model.n_embd=32");
  test::write_file(dir.file("typo.yaml"), "sweep:\n  grid:\n    model.n_layr: [1, 2]\n");
  auto file = run_llmprof({"sweep", "--config", dir.file("typo.yaml"), "--out", dir.path()});
  EXPECT_EQ(file.exit_code, 2) << file.output;
  expect_contains(file.output, "typo.yaml line 3");
  expect_contains(file.output, "did you mean 'model.n_layer'");
  EXPECT_EQ(run_llmprof(sweep_args(dir, {"--jobs", "0"})).exit_code, 2);
  EXPECT_EQ(run_llmprof(sweep_args(dir, {"--repeat", "x"})).exit_code, 2);
  EXPECT_FALSE(fs::exists(dir.file("s")));
  EXPECT_FALSE(fs::exists(dir.file("sweep-typo")));
}

TEST(SweepPlan, PointPredictedNotToFitIsSkippedWithTheReasonAndTheOthersRun) {
  // A 256 MiB device (a byte count is planned as a GPU's allocator share): batch 2 of tiny_test
  // (vocabulary 128) needs under 1 MiB of tensors, 178 MiB reserved with the 176 MiB of
  // workspaces and pools; batch 4096 (131,072 tokens) needs 64 MiB for its fp32 logits alone
  // (131072 x 128 x 4 bytes), over 800 MiB with its activations: it is skipped, not run.
  ScratchDir dir;
  auto r = run_llmprof(
      sweep_args(dir, {"--grid", "train.batch_size=2,4096", "--set", "model.vocab_size=128",
                       "--set", "schedule.max_steps=2", "--set", "train.eval_interval=0", "--plan",
                       "--plan-device", "268435456"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "1 completed");
  expect_contains(r.output, "1 skipped (predicted not to fit); 0 reused");
  auto rows = csv_rows(dir.file("s") + "/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["status"], "completed");
  EXPECT_EQ(rows[1]["status"], "skipped");
  // The reason is the point's message in sweep.json (and its record runs/<id>.point.json).
  const auto j = read_json(dir.file("s") + "/sweep.json");
  const std::string why = j["points"][1]["message"].get<std::string>();
  expect_contains(why, "predicted not to fit: peak ");
  expect_contains(why, "> usable 256.0 MiB of 268435456");
  EXPECT_TRUE(j["points"][0]["message"].is_null());
  EXPECT_FALSE(fs::exists(dir.file("s") + "/runs/" + rows[1]["point_id"] + "/summary.json"));
  // The report reads such a sweep: the skipped point is named so, its figures unknown.
  auto report = run_llmprof({"report", dir.file("s")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  expect_contains(report.output, "skipped");
  // --plan-device without --plan is a usage error.
  EXPECT_EQ(run_llmprof(sweep_args(dir, {"--plan-device", "1GiB"})).exit_code, 2);
}

TEST(SweepPlan, PointThatCannotBePlannedExitsTwoNamingTheCauseBeforeAnythingRuns) {
  // The planner builds the char vocabulary from the run's corpus, as train does: a corpus file
  // that is not there is named before any point runs.
  ScratchDir dir;
  auto r = run_llmprof(sweep_args(dir, {"--grid", "train.batch_size=2,4", "--set",
                                        "data.path=" + dir.file("missing.txt"), "--plan"}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, dir.file("missing.txt"));
  EXPECT_FALSE(fs::exists(dir.file("s") + "/sweep.csv"));
}

TEST(SweepCommand, FailingPointIsRecordedAndTheSweepGoesOn) {
  ScratchDir dir;
  std::string corpus;
  for (int i = 0; corpus.size() < 20000; ++i)
    corpus += "To be, or not to be: line " + std::to_string(i) + ".\n";
  test::write_file(dir.file("corpus.txt"), corpus);
  auto r = run_llmprof(sweep_args(
      dir, {"--grid", "data.path=" + dir.file("missing.txt") + "," + dir.file("corpus.txt")}));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  auto rows = csv_rows(dir.file("s/sweep.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["status"], "failed");
  EXPECT_EQ(rows[0]["exit_code"], "2");
  EXPECT_EQ(rows[0]["run_dir"], "");
  EXPECT_EQ(rows[1]["status"], "completed");
  auto j = read_json(dir.file("s/sweep.json"));
  std::string msg = j["points"][0]["message"];
  expect_contains(msg, "exit code 2");
  expect_contains(msg, "missing.txt");
}

// Waits until the sweep in sweep_dir has finished at least one point and started the next (its
// log exists), so a kill lands in the middle of a point; false on timeout.
bool wait_for_mid_sweep(const std::string& sweep_dir, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    size_t rows = csv_rows(sweep_dir + "/sweep.csv").size(), logs = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(sweep_dir + "/runs", ec)) {
      logs += e.path().extension() == ".log";
    }
    if (rows >= 1 && logs > rows) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Starts a 2x2 sweep, kills it with sig once one point is done and the next started, re-runs the
// same command and checks that no completed point ran again and that all end completed.
void check_resume_after(int sig, int expected_exit) {
  ScratchDir dir;
  auto args = sweep_args(dir, k2x2);
  // Long enough points that a fast machine is still mid-sweep when the signal comes.
  // One thread per point: ctest runs two tests at once on 2 cores, and 2-thread OpenMP points
  // oversubscribed them (each test then took ~140 s instead of ~7).
  args.insert(args.end(), {"--set", "schedule.max_steps=300", "--set", "threads=1"});
  int pid = test::spawn_llmprof(args, dir.file("first.log"));
  ASSERT_TRUE(wait_for_mid_sweep(dir.file("s"), 120)) << test::read_file(dir.file("first.log"));
  ::kill(pid, sig);
  EXPECT_EQ(test::wait_llmprof(pid), expected_exit) << test::read_file(dir.file("first.log"));
  std::map<std::string, fs::file_time_type> completed;
  size_t interrupted = 0;
  for (auto& row : csv_rows(dir.file("s/sweep.csv"))) {
    if (row["status"] == "completed")
      completed[row["point_id"]] = fs::last_write_time(row["run_dir"] + "/summary.json");
    interrupted += row["status"] == "interrupted";
  }
  if (interrupted > 0) {
    // The point cut short is shown apart, not counted as done.
    const std::string log = test::read_file(dir.file("first.log"));
    expect_contains(log, fmt::format("[{}/4 done, {} interrupted", completed.size(), interrupted));
  }
  ASSERT_GE(completed.size(), 1u);
  ASSERT_LT(completed.size(), 4u) << "the sweep finished before it was killed";

  auto again = run_llmprof(args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  auto rows = csv_rows(dir.file("s/sweep.csv"));
  ASSERT_EQ(rows.size(), 4u);
  bool any_moved = false;
  for (auto& row : rows) {
    EXPECT_EQ(row["status"], "completed") << row["point_id"];
    const std::string attempt = dir.file("s/runs/" + row["point_id"] + ".attempt1");
    auto it = completed.find(row["point_id"]);
    if (it != completed.end()) {
      EXPECT_EQ(fs::last_write_time(row["run_dir"] + "/summary.json"), it->second)
          << "re-ran " << it->first;
      EXPECT_FALSE(fs::exists(attempt)) << attempt;
    }
    any_moved = any_moved || fs::exists(attempt) || fs::exists(attempt + ".log");
  }
  auto j = read_json(dir.file("s/sweep.json"));
  size_t reused = 0;
  for (auto& p : j["points"]) reused += p["reused"].get<bool>();
  // After SIGKILL the running point gets SIGTERM from the kernel and may still complete its last
  // step (then it is reused); otherwise it was cut short and moved aside.
  EXPECT_GE(reused, completed.size());
  EXPECT_TRUE(any_moved || reused > completed.size()) << "the point cut short was not moved aside";
}

TEST(SweepResume, SigintStopsAndTheSameCommandRunsOnlyWhatIsLeft) {
  check_resume_after(SIGINT, 130);
}

TEST(SweepResume, SigkillAndTheSameCommandRunsOnlyWhatIsLeft) {
  check_resume_after(SIGKILL, 128 + SIGKILL);
}

TEST(SweepResume, SigtermStopsLikeSigintAndTheSameCommandRunsOnlyWhatIsLeft) {
  check_resume_after(SIGTERM, 130);
}

// Waits until path holds text (the lock file names its holder); false on timeout.
bool wait_for_text(const std::string& path, const std::string& text, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (test::read_file(path) == text) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(SweepLock, ASecondSweepOnTheSameDirectoryExitsTwoNamingTheHoldersPid) {
  ScratchDir dir;
  auto args = sweep_args(dir, {"--grid", "optim.lr=1e-3,2e-3", "--set", "schedule.max_steps=300"});
  const int pid = test::spawn_llmprof(args, dir.file("first.log"));
  ASSERT_TRUE(wait_for_text(dir.file("s/.lock"), std::to_string(pid) + "\n", 120))
      << test::read_file(dir.file("first.log"));
  const auto second = run_llmprof(args);
  EXPECT_EQ(second.exit_code, 2) << second.output;
  expect_contains(second.output, fmt::format("llmprof sweep (pid {}) holds", pid));
  ::kill(pid, SIGINT);
  EXPECT_EQ(test::wait_llmprof(pid), 130) << test::read_file(dir.file("first.log"));
}

TEST(SweepLock, ALockFileLeftByADeadSweepDoesNotBlock) {
  ScratchDir dir;
  const pid_t dead = ::fork();  // a pid that was a process and is no more
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(test::wait_llmprof(dead), 0);
  test::write_file(dir.file("s/.lock"), std::to_string(dead) + "\n");
  const auto r =
      run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3", "--set", "schedule.max_steps=3"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("in use"), std::string::npos) << r.output;
  EXPECT_EQ(csv_rows(dir.file("s/sweep.csv")).size(), 1u);
}

TEST(SweepResume, RerunsFailedPointsAndKeepsDivergedOnes) {
  ScratchDir dir;
  auto args = sweep_args(dir, {"--grid", "optim.lr=1e-3,2e-3,3e-3"});
  ASSERT_EQ(run_llmprof(args).exit_code, 0);
  auto rows = csv_rows(dir.file("s/sweep.csv"));
  ASSERT_EQ(rows.size(), 3u);
  // Mark point 1 as failed and point 2 as diverged, as a crashed / NaN run would have left them.
  for (int i : {0, 1}) {
    std::string path = rows[i]["run_dir"] + "/summary.json";
    auto s = read_json(path);
    s["status"] = i == 0 ? "failed" : "diverged";
    test::write_file(path, s.dump());
  }
  auto before = fs::last_write_time(rows[2]["run_dir"] + "/summary.json");
  auto again = run_llmprof(args);
  EXPECT_EQ(again.exit_code, 0) << again.output;  // diverged counts as a result
  auto after = csv_rows(dir.file("s/sweep.csv"));
  EXPECT_EQ(after[0]["status"], "completed");
  EXPECT_EQ(
      read_json(dir.file("s/runs/" + rows[0]["point_id"] + ".attempt1/summary.json"))["status"],
      "failed");
  EXPECT_TRUE(fs::exists(dir.file("s/runs/" + rows[0]["point_id"] + ".attempt1.log")));
  EXPECT_EQ(after[1]["status"], "diverged");
  EXPECT_EQ(after[1]["exit_code"], "1");
  EXPECT_FALSE(fs::exists(dir.file("s/runs/" + rows[1]["point_id"] + ".attempt1")));
  EXPECT_EQ(fs::last_write_time(rows[2]["run_dir"] + "/summary.json"), before);
}

TEST(SweepResume, MeasuresTheMfuPeakOnceAndReusesItOnResume) {
  ScratchDir dir;
  // profile.peak_flops_per_s=0 means "measure" (tiny_test.yaml configures one): the sweep then
  // measures a shared peak once for its points.
  // Not --quiet: the resumed sweep says that it reused the peak.
  std::vector<std::string> args{"sweep", "--config", kTiny, "--out", dir.path(), "--name", "s"};
  args.insert(args.end(), {"--grid", "optim.lr=1e-3,2e-3", "--set", "profile.peak_flops_per_s=0"});
  auto first = run_llmprof(args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  auto j1 = read_json(dir.file("s/sweep.json"));
  ASSERT_TRUE(j1["peak_flops_per_s"].is_number()) << j1.dump(2);
  expect_contains(j1["peak_source"], "measured once by the sweep");
  EXPECT_EQ(j1["peak_reused"], false);
  // Resume after point 2 failed: it runs again, against the peak point 1 was divided by.
  auto rows = csv_rows(dir.file("s/sweep.csv"));
  ASSERT_EQ(rows.size(), 2u);
  const std::string summary = rows[1]["run_dir"] + "/summary.json";
  auto s = read_json(summary);
  s["status"] = "failed";
  test::write_file(summary, s.dump());
  auto again = run_llmprof(args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  expect_contains(again.output, "reused");
  auto j2 = read_json(dir.file("s/sweep.json"));
  EXPECT_EQ(j2["peak_flops_per_s"], j1["peak_flops_per_s"]);
  EXPECT_EQ(j2["peak_reused"], true);
  EXPECT_EQ(j2["peak_measured_at"], j1["peak_measured_at"]);
  const std::string peak_line =
      fmt::format("peak_flops_per_s: {}", j1["peak_flops_per_s"].get<double>());
  for (auto& row : csv_rows(dir.file("s/sweep.csv"))) {
    EXPECT_EQ(row["status"], "completed");
    expect_contains(test::read_file(row["run_dir"] + "/config.yaml"), peak_line);
  }
}

TEST(SweepResume, ChangedSetRunsPointsAgainWithoutOverwriting) {
  ScratchDir dir;
  ASSERT_EQ(run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3"})).exit_code, 0);
  auto r =
      run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3", "--set", "schedule.max_steps=10"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "another config");
  const std::string id = "p001-optim.lr=0.001-r1";
  EXPECT_TRUE(fs::exists(dir.file("s/runs/" + id + ".attempt1/summary.json")));
  expect_contains(test::read_file(dir.file("s/runs/" + id + "/config.yaml")), "max_steps: 10");
}

TEST(SweepJobs, TwoJobsSplitTheCoresAndComplete) {
  ScratchDir dir;
  auto r = run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3,2e-3,3e-3", "--jobs", "2"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = read_json(dir.file("s/sweep.json"));
  const int64_t cores = j["cores"];
  const int64_t jobs = std::min<int64_t>(2, cores);
  EXPECT_EQ(j["jobs"], jobs);
  EXPECT_EQ(j["threads_per_point"], std::max<int64_t>(1, cores / jobs));
  for (auto& row : csv_rows(dir.file("s/sweep.csv"))) {
    EXPECT_EQ(row["status"], "completed");
    expect_contains(test::read_file(row["run_dir"] + "/config.yaml"),
                    "threads: " + std::to_string(j["threads_per_point"].get<int64_t>()));
  }
  auto clamped = run_llmprof({"sweep", "--config", kTiny, "--out", dir.path(), "--name", "c",
                              "--quiet", "--grid", "optim.lr=1e-3", "--jobs", "4096"});
  ASSERT_EQ(clamped.exit_code, 0) << clamped.output;
  auto jc = read_json(dir.file("c/sweep.json"));
  EXPECT_EQ(jc["jobs_requested"], 4096);
  EXPECT_EQ(jc["jobs"], jc["cores"]);
  expect_contains(clamped.output, "exceeds");
}

}  // namespace
}  // namespace llmprof

// ---------------------------------------------------------------------------------------------
// run-point and status: the entry point of every point (local launcher and Slurm tasks) and the
// view of a sweep from its directory alone.

namespace llmprof {
namespace {

// Holds an exclusive flock on path while alive, as a run-point holds its point's.
class HeldLock {
 public:
  explicit HeldLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT, 0644)) {
    EXPECT_EQ(::flock(fd_, LOCK_EX | LOCK_NB), 0) << path;
  }
  ~HeldLock() { ::close(fd_); }

 private:
  int fd_;
};

TEST(SweepRunPoint, SkipsAFinishedPointAndRejectsABadIndexOrDirectory) {
  ScratchDir dir;
  ASSERT_EQ(run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3"})).exit_code, 0);
  const std::string s = dir.file("s");
  const std::string summary = s + "/runs/p001-optim.lr=0.001-r1/summary.json";
  const auto before = fs::last_write_time(summary);
  auto again = run_llmprof({"sweep", "run-point", s, "--index", "0"});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  expect_contains(again.output, "skipped (already completed");
  EXPECT_EQ(fs::last_write_time(summary), before);
  auto record = read_json(s + "/runs/p001-optim.lr=0.001-r1.point.json");
  EXPECT_EQ(record["status"], "completed");
  EXPECT_FALSE(record["host"].get<std::string>().empty());
  EXPECT_FALSE(record["end_time"].get<std::string>().empty());
  auto bad_index = run_llmprof({"sweep", "run-point", s, "--index", "1"});
  EXPECT_EQ(bad_index.exit_code, 2) << bad_index.output;
  expect_contains(bad_index.output, "--index 1: the sweep in");
  auto not_a_sweep = run_llmprof({"sweep", "run-point", dir.path(), "--index", "0"});
  EXPECT_EQ(not_a_sweep.exit_code, 2) << not_a_sweep.output;
  expect_contains(not_a_sweep.output, "plan.json: not found");
}

TEST(SweepRunPoint, APointClaimedByAnotherTaskIsNotRunTwice) {
  ScratchDir dir;
  ASSERT_EQ(run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3"})).exit_code, 0);
  const std::string s = dir.file("s"), id = "p001-optim.lr=0.001-r1";
  // Failed points run again, unless another task holds the point.
  auto sum = read_json(s + "/runs/" + id + "/summary.json");
  sum["status"] = "failed";
  test::write_file(s + "/runs/" + id + "/summary.json", sum.dump());
  {
    HeldLock held(s + "/runs/" + id + ".lock");
    auto r = run_llmprof({"sweep", "run-point", s, "--index", "0"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    expect_contains(r.output, "skipped (another task runs it");
    EXPECT_FALSE(fs::exists(s + "/runs/" + id + ".attempt1"));
    auto st = run_llmprof({"sweep", "status", s});
    expect_contains(st.output, "1 failed");
  }
  auto r = run_llmprof({"sweep", "run-point", s, "--index", "0", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(s + "/runs/" + id + ".attempt1/summary.json"));
  EXPECT_TRUE(fs::exists(s + "/runs/" + id + ".attempt1.point.json"));
  EXPECT_EQ(csv_rows(s + "/sweep.csv")[0]["status"], "completed");
}

TEST(SweepStatus, ShowsRunningPointsByTheirLockAndDeadOnesAsInterrupted) {
  ScratchDir dir;
  ASSERT_EQ(run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3,2e-3"})).exit_code, 0);
  const std::string s = dir.file("s"), id = "p002-optim.lr=0.002-r1";
  auto done = run_llmprof({"sweep", "status", s});
  EXPECT_EQ(done.exit_code, 0) << done.output;
  expect_contains(done.output, "2 completed");
  expect_contains(done.output, "progress: 2/2 done");
  // Point 2 as a task that started it left it: a record that says running, no summary yet.
  fs::rename(s + "/runs/" + id, s + "/runs/elsewhere");
  auto record = read_json(s + "/runs/" + id + ".point.json");
  record["status"] = "running";
  record["slurm_job_id"] = "77";
  record["slurm_task_id"] = "1";
  test::write_file(s + "/runs/" + id + ".point.json", record.dump());
  {
    HeldLock held(s + "/runs/" + id + ".lock");
    auto running = run_llmprof({"sweep", "status", s});
    expect_contains(running.output, "1 running");
    expect_contains(running.output, "job 77_1");
  }
  auto dead = run_llmprof({"sweep", "status", s});  // nobody holds it: the task died
  expect_contains(dead.output, "1 interrupted");
  expect_contains(dead.output, "without recording an outcome");
  auto rows = csv_rows(s + "/sweep.csv");  // status brought sweep.csv up to date
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["status"], "interrupted");
  EXPECT_EQ(rows[1]["slurm_job_id"], "77");
}

TEST(SweepSlurm, MissingSbatchAndBadLauncherKeysAreClearErrors) {
  ScratchDir dir;
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent", 1);
  auto r = run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3", "--launcher", "slurm"}));
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "sbatch not found on PATH");
  auto bad = run_llmprof(sweep_args(dir, {"--launcher", "slurmm"}));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  expect_contains(bad.output, "--launcher 'slurmm'");
  test::write_file(dir.file("l.yaml"), test::read_file(kTiny) + "sweep:\n  launcher: slurmm\n");
  auto file = run_llmprof({"sweep", "--config", dir.file("l.yaml"), "--out", dir.path()});
  EXPECT_EQ(file.exit_code, 2) << file.output;
  expect_contains(file.output, "sweep.launcher: 'slurmm' is not one of local|slurm");
  expect_contains(file.output, "l.yaml line 25");
  test::write_file(dir.file("k.yaml"),
                   test::read_file(kTiny) + "sweep:\n  slurm:\n    cpus_per_tsk: 2\n");
  auto key = run_llmprof({"sweep", "--config", dir.file("k.yaml"), "--out", dir.path()});
  EXPECT_EQ(key.exit_code, 2) << key.output;
  expect_contains(key.output, "unknown key 'sweep.slurm.cpus_per_tsk'");
  auto local = run_llmprof(sweep_args(dir, {"--slurm-arg=--account=x"}));
  EXPECT_EQ(local.exit_code, 2) << local.output;
  auto keys = run_llmprof({"config", "keys"});
  expect_contains(keys.output, "sweep.launcher");
  expect_contains(keys.output, "local|slurm");
  expect_contains(keys.output, "sweep.slurm.max_concurrent_tasks");
}

}  // namespace
}  // namespace llmprof
