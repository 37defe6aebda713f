// llmprof sweep --launcher slurm against a real one-node Slurm (scripts/slurm/start-local.sh; no
// mock of sbatch): a 2 x 2 batch x lr sweep of the tiny model as a job array and a report job
// after it, compared with the local launcher's sweep of the same grid; a re-submission that runs
// nothing; a point cancelled with scancel mid-run that the next submission runs again, alone; and
// sbatch's own refusal shown. main() starts the cluster and exits 77 (ctest's skip) where Slurm
// cannot be installed or started, saying why.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "llmprof/output/csv.h"
#include "support/csv_rows.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof {
namespace {

using test::run_llmprof;
using test::expect_contains;
using test::ScratchDir;
using Row = test::CsvRow;
using test::csv_rows;
using Clock = std::chrono::steady_clock;

const std::string& kTiny = test::kTinyConfig;
const std::vector<std::string> k2x2 = {"--grid", "train.batch_size=2,4", "--grid",
                                       "optim.lr=1e-3,3e-3"};

// A shell command's stdout (stderr along), trailing newlines cut.
std::string shell(const std::string& cmd) {
  std::string out;
  if (FILE* f = ::popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, f) != nullptr) out += buf;
    ::pclose(f);
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<std::string> csv_header(const std::string& path) {
  auto rows = output::parse_csv(test::read_file(path));
  return rows.empty() ? std::vector<std::string>{} : rows[0];
}

// The job id after "label job " in the submission's output; "" when absent.
std::string job_id(const std::string& output, const std::string& label) {
  std::smatch m;
  if (std::regex_search(output, m, std::regex(label + R"(\s+job (\d+))"))) return m[1];
  return "";
}

// scontrol's JobState of a job or array task ("" once Slurm has forgotten it).
std::string job_state(const std::string& id) {
  std::smatch m;
  const std::string out = shell("scontrol -o show job " + id);
  if (std::regex_search(out, m, std::regex(R"(JobState=(\w+))"))) return m[1];
  return "";
}

// Waits until job id has ended; its final state, or "timeout".
std::string wait_job(const std::string& id, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    const std::string s = job_state(id);
    if (s != "PENDING" && s != "RUNNING" && s != "CONFIGURING" && s != "COMPLETING") return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return "timeout";
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<std::string> sweep_args(const ScratchDir& dir,
                                    const std::string& name,
                                    std::vector<std::string> extra) {
  std::vector<std::string> args{"sweep", "--config", kTiny, "--out", dir.path(), "--name", name,
                                "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(SlurmSweep, TwoByTwoArrayMatchesTheLocalLauncherAndResubmitsNothing) {
  ScratchDir dir("llmprof-slurm");
  auto t0 = Clock::now();
  auto local = run_llmprof(sweep_args(dir, "local", k2x2));
  const double local_s = seconds_since(t0);
  ASSERT_EQ(local.exit_code, 0) << local.output;

  t0 = Clock::now();
  std::vector<std::string> slurm_args = k2x2;
  slurm_args.insert(slurm_args.end(), {"--launcher", "slurm", "--jobs", "2"});
  auto sub = run_llmprof(sweep_args(dir, "s", slurm_args));
  ASSERT_EQ(sub.exit_code, 0) << sub.output;
  expect_contains(sub.output, "--array=0-3%2");
  expect_contains(sub.output, "node-local");  // the scratch dir is under /tmp
  const std::string array = job_id(sub.output, "array:"), report = job_id(sub.output, "report:");
  ASSERT_FALSE(array.empty()) << sub.output;
  ASSERT_FALSE(report.empty()) << sub.output;
  EXPECT_EQ(wait_job(report, 240), "COMPLETED") << test::read_file(dir.file("s/slurm/logs/report_" + report + ".out"));
  const double slurm_s = seconds_since(t0);
  std::printf("[ wall time ] 2x2 tiny sweep: local launcher (--jobs 2) %.1f s; Slurm launcher "
              "(--jobs 2, submit to report job done) %.1f s\n",
              local_s, slurm_s);

  // The same table as the local launcher's: columns, points and their order.
  const std::string s = dir.file("s");
  EXPECT_EQ(csv_header(s + "/sweep.csv"), csv_header(dir.file("local/sweep.csv")));
  auto rows = csv_rows(s + "/sweep.csv");
  auto local_rows = csv_rows(dir.file("local/sweep.csv"));
  ASSERT_EQ(rows.size(), 4u);
  ASSERT_EQ(local_rows.size(), 4u);
  std::set<std::string> tasks;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    EXPECT_EQ(row.at("point_id"), local_rows[i].at("point_id"));
    EXPECT_EQ(row.at("train.batch_size"), local_rows[i].at("train.batch_size"));
    EXPECT_EQ(row.at("status"), "completed") << row.at("point_id");
    EXPECT_EQ(local_rows[i].at("status"), "completed");
    EXPECT_FALSE(row.at("median_step_ms").empty());
    EXPECT_FALSE(row.at("host").empty());
    EXPECT_EQ(row.at("slurm_job_id"), array);
    EXPECT_TRUE(local_rows[i].at("slurm_job_id").empty());
    EXPECT_FALSE(row.at("start_time").empty());
    EXPECT_FALSE(row.at("end_time").empty());
    tasks.insert(row.at("slurm_task_id"));
    // One log per task, named by array job and task id (%A_%a).
    EXPECT_TRUE(fs::exists(s + "/slurm/logs/" + array + "_" + row.at("slurm_task_id") + ".out"));
    EXPECT_TRUE(fs::exists(row.at("run_dir") + "/summary.json"));
  }
  EXPECT_EQ(tasks, (std::set<std::string>{"0", "1", "2", "3"}));
  // The dependent job's report and charts.
  expect_contains(test::read_file(s + "/report.md"), "p004-train.batch_size=4-optim.lr=0.003-r1");
  size_t charts = 0;
  for (const auto& e : fs::directory_iterator(s + "/plots")) charts += e.path().extension() == ".png";
  EXPECT_GE(charts, 1u);
  auto status = run_llmprof({"sweep", "status", s});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  expect_contains(status.output, "4 completed");
  expect_contains(status.output, "4/4 done");

  // A second submission finds every point done and submits nothing.
  std::map<std::string, fs::file_time_type> summaries;
  for (const Row& row : rows) summaries[row.at("run_dir")] = fs::last_write_time(row.at("run_dir") + "/summary.json");
  const std::string submissions = test::read_file(s + "/slurm/submissions.csv");
  auto again = run_llmprof(sweep_args(dir, "s", slurm_args));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  expect_contains(again.output, "nothing to submit");
  EXPECT_EQ(test::read_file(s + "/slurm/submissions.csv"), submissions);
  for (const auto& [run_dir, t] : summaries) {
    EXPECT_EQ(fs::last_write_time(run_dir + "/summary.json"), t) << run_dir;
  }
}

TEST(SlurmSweep, CancelledPointRunsAgainOnResubmissionAndNothingElseDoes) {
  ScratchDir dir("llmprof-slurm");
  // Point 0 is long enough to be cancelled mid-run; point 1 is short. One task at a time.
  auto sub = run_llmprof(sweep_args(
      dir, "k", {"--grid", "schedule.max_steps=1500,20", "--launcher", "slurm", "--jobs", "1"}));
  ASSERT_EQ(sub.exit_code, 0) << sub.output;
  const std::string array = job_id(sub.output, "array:"), report = job_id(sub.output, "report:");
  ASSERT_FALSE(array.empty()) << sub.output;
  const std::string k = dir.file("k");
  const std::string long_id = "p001-schedule.max_steps=1500-r1";
  // Mid-run: the long point has written some steps.
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline &&
         output::parse_csv(test::read_file(k + "/runs/" + long_id + "/steps.csv")).size() < 4) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(output::parse_csv(test::read_file(k + "/runs/" + long_id + "/steps.csv")).size(), 4u)
      << test::read_file(k + "/slurm/logs/" + array + "_0.out");
  shell("scancel " + array + "_0");
  ASSERT_EQ(wait_job(report, 240), "COMPLETED");
  EXPECT_EQ(job_state(array + "_0"), "CANCELLED");
  auto rows = csv_rows(k + "/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("point_id"), long_id);
  EXPECT_EQ(rows[0].at("status"), "interrupted");
  EXPECT_EQ(rows[1].at("status"), "completed");
  const auto short_time = fs::last_write_time(rows[1].at("run_dir") + "/summary.json");

  auto again = run_llmprof(sweep_args(
      dir, "k", {"--grid", "schedule.max_steps=1500,20", "--launcher", "slurm", "--jobs", "1"}));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  expect_contains(again.output, "--array=0%1");  // the cancelled point alone
  const std::string array2 = job_id(again.output, "array:"), report2 = job_id(again.output, "report:");
  ASSERT_EQ(wait_job(report2, 240), "COMPLETED");
  rows = csv_rows(k + "/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "completed");
  EXPECT_EQ(rows[0].at("slurm_job_id"), array2);
  EXPECT_EQ(rows[1].at("slurm_job_id"), array);  // not run again
  EXPECT_EQ(fs::last_write_time(rows[1].at("run_dir") + "/summary.json"), short_time);
  // The cancelled attempt is kept beside, not overwritten.
  EXPECT_TRUE(fs::exists(k + "/runs/" + long_id + ".attempt1/steps.csv"));
  EXPECT_TRUE(fs::exists(k + "/runs/" + long_id + ".attempt1.point.json"));
}

// A point of nproc 2 is `srun --ntasks 2 llmprof train` inside its array task: one run of two ranks
// (rank0/ and rank1/, world size 2 in summary.json), its row completed like a one-rank point's.
TEST(SlurmSweep, PointOfTwoRanksRunsAsOneRunOfTwoRanks) {
  ScratchDir dir("llmprof-slurm");
  auto sub = run_llmprof(sweep_args(dir, "n2",
                                    {"--grid", "nproc=1,2", "--set", "schedule.max_steps=4",
                                     "--set", "train.eval_interval=0", "--launcher", "slurm"}));
  ASSERT_EQ(sub.exit_code, 0) << sub.output;
  expect_contains(sub.output, "--array=0-1");
  const std::string array = job_id(sub.output, "array:"), report = job_id(sub.output, "report:");
  ASSERT_FALSE(report.empty()) << sub.output;
  const std::string n2 = dir.file("n2");
  EXPECT_EQ(wait_job(report, 300), "COMPLETED")
      << test::read_file(n2 + "/slurm/logs/" + array + "_1.out");
  EXPECT_NE(test::read_file(n2 + "/slurm/array.sbatch").find("#SBATCH --ntasks=2"),
            std::string::npos);
  auto rows = csv_rows(n2 + "/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("nproc"), "2");
  for (const Row& row : rows) {
    EXPECT_EQ(row.at("status"), "completed")
        << row.at("point_id") << "\n"
        << test::read_file(n2 + "/slurm/logs/" + array + "_" + row.at("slurm_task_id") + ".out");
  }
  const std::string two = rows[1].at("run_dir");
  EXPECT_TRUE(fs::exists(two + "/rank0/summary.json")) << two;
  EXPECT_TRUE(fs::exists(two + "/rank1/summary.json")) << two;
  EXPECT_FALSE(fs::exists(rows[0].at("run_dir") + "/rank1")) << rows[0].at("run_dir");
  const auto summary = nlohmann::json::parse(test::read_file(two + "/summary.json"));
  EXPECT_EQ(summary.at("distributed").at("world_size"), 2) << summary.dump(1);
  EXPECT_EQ(summary.at("distributed").at("launcher"), "slurm") << summary.dump(1);
}

TEST(SlurmSweep, SbatchRefusalIsShownWithItsMessage) {
  ScratchDir dir("llmprof-slurm");
  auto r = run_llmprof(sweep_args(dir, "bad", {"--grid", "optim.lr=1e-3", "--launcher", "slurm",
                                               "--slurm-arg=--partition=no_such_partition"}));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "sbatch refused the job");
  expect_contains(r.output, "partition");
}

}  // namespace
}  // namespace llmprof

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  char state[] = "/tmp/llmprof-slurm-cluster.XXXXXX";
  if (::mkdtemp(state) == nullptr) return 1;
  const std::string scripts = std::string(LLMPROF_SOURCE_DIR) + "/scripts/slurm/";
  const std::string out = std::string(state) + "/start.out";
  const int rc = std::system((scripts + "start-local.sh " + state + " >" + out + " 2>&1").c_str());
  const int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
  const std::string start_out = llmprof::test::read_file(out);
  if (code != 0) {
    std::printf("%s\n", start_out.c_str());
    std::printf(code == 77 ? "SKIPPED: no Slurm here (see above)\n"
                           : "could not start the one-node Slurm cluster\n");
    std::system(("rm -rf " + std::string(state)).c_str());
    return code == 77 ? 77 : 1;
  }
  ::setenv("SLURM_CONF", (std::string(state) + "/slurm.conf").c_str(), 1);
  const int result = RUN_ALL_TESTS();
  std::system((scripts + "stop-local.sh " + state).c_str());
  return result;
}
