// How llmprof sweep is told where and how points run: the sweep section's keys given with --set
// (as `llmprof config keys` lists them), an sbatch that refuses the job (a fake sbatch on PATH:
// one line of its message, sweep.json and `sweep status` saying nothing was submitted, the /tmp
// warning printed all the same), and a user's threads replacing the sweep's split in what the
// sweep logs and records (and the one MFU peak it measures for its points).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/csv_rows.h"
#include "support/test_support.h"

namespace llmprof {
namespace {

using test::run_llmprof;
using test::expect_contains;
using test::ScratchDir;

const std::string& kTiny = test::kTinyConfig;

std::vector<std::string> sweep_args(const ScratchDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> args{"sweep", "--config", kTiny, "--out", dir.path(), "--name", "s"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(test::read_file(path));
}

// PATH with dir first while alive: a fake sbatch there is the one llmprof finds.
class PathWith {
 public:
  explicit PathWith(const std::string& dir)
      : saved_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    ::setenv("PATH", (dir + ":" + saved_).c_str(), 1);
  }
  ~PathWith() { ::setenv("PATH", saved_.c_str(), 1); }

 private:
  std::string saved_;
};

// Writes <dir>/bin/sbatch, a shell script with body; returns <dir>/bin.
std::string fake_sbatch(const ScratchDir& dir, const std::string& body) {
  const std::string bin = dir.file("bin");
  test::write_file(bin + "/sbatch", "#!/bin/sh\n" + body);
  ::chmod((bin + "/sbatch").c_str(), 0755);
  return bin;
}

TEST(SweepSlurm, SetSweepKeysConfigureTheLauncherAndStayOutOfThePoints) {
  ScratchDir dir;
  // Records each call's arguments; job ids 101, then 102.
  const std::string calls = dir.file("calls.txt");
  PathWith path(fake_sbatch(dir, "echo \"$@\" >> '" + calls +
                                     "'\n"
                                     "n=$(wc -l < '" +
                                     calls + "')\necho $((100 + n))\n"));
  auto r = run_llmprof(sweep_args(
      dir, {"--grid", "optim.lr=1e-3,2e-3", "--set", "sweep.launcher=slurm", "--set",
            "sweep.slurm.partition=debug", "--set", "sweep.slurm.extra_args=[--account=proj]",
            "--set", "sweep.slurm.max_concurrent_tasks=1", "--set", "schedule.max_steps=5"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "array:   job 101 (--array=0-1%1;");
  expect_contains(r.output, "report:  job 102");
  expect_contains(test::read_file(dir.file("s/slurm/array.sbatch")), "#SBATCH --partition=debug\n");
  const std::string args = test::read_file(calls);
  expect_contains(args, "--parsable --array=0-1%1 --account=proj ");
  expect_contains(args, "--parsable --dependency=afterany:101 --account=proj ");
  // Each point's `llmprof train` gets the run's --set, not the launcher's.
  const auto j = read_json(dir.file("s/sweep.json"));
  EXPECT_EQ(j["launcher"], "slurm");
  EXPECT_EQ(j["overrides"], nlohmann::json::array({"schedule.max_steps=5"}));
  EXPECT_EQ(j["status"], "submitted");
}

TEST(SweepSlurm, BadSweepKeyInSetExitsTwoNamingItBeforeAnythingRuns) {
  ScratchDir dir;
  auto typo = run_llmprof(sweep_args(dir, {"--set", "sweep.slurm.partiton=debug"}));
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  expect_contains(typo.output,
                  "unknown key 'sweep.slurm.partiton' (--set sweep.slurm.partiton=debug)");
  expect_contains(typo.output, "sweep.slurm holds partition, time");
  auto value = run_llmprof(sweep_args(dir, {"--set", "sweep.slurm.cpus_per_task=many"}));
  EXPECT_EQ(value.exit_code, 2) << value.output;
  expect_contains(value.output, "sweep.slurm.cpus_per_task: 'many' is not an integer in [1, 4096]");
  auto launcher = run_llmprof(sweep_args(dir, {"--set", "sweep.launcher=slurmm"}));
  EXPECT_EQ(launcher.exit_code, 2) << launcher.output;
  expect_contains(launcher.output, "sweep.launcher: 'slurmm' is not one of local|slurm");
  expect_contains(launcher.output, "(--set sweep.launcher=slurmm)");
  auto grid = run_llmprof(sweep_args(dir, {"--set", "sweep.grid.optim.lr=1e-3"}));
  EXPECT_EQ(grid.exit_code, 2) << grid.output;
  expect_contains(grid.output, "--grid KEY=V1,V2");
  EXPECT_FALSE(std::filesystem::exists(dir.file("s")));
}

TEST(SweepSlurm, SbatchRefusalIsOneLineAndTheSweepSaysNothingWasSubmitted) {
  ScratchDir dir;  // under /tmp: the node-local warning is due
  PathWith path(fake_sbatch(dir,
                            "echo 'sbatch: error: invalid partition specified: debug' >&2\n"
                            "echo 'sbatch: error: Batch job submission failed: Invalid partition "
                            "name specified' >&2\nexit 1\n"));
  auto r = run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3,2e-3", "--launcher", "slurm"}));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output,
                  "sbatch: error: invalid partition specified: debug; sbatch: error: Batch job "
                  "submission failed: Invalid partition name specified; nothing was submitted");
  EXPECT_EQ(r.output.find("\\n"), std::string::npos) << r.output;  // no escaped newline
  expect_contains(r.output, "is under a node-local directory");
  const auto j = read_json(dir.file("s/sweep.json"));
  EXPECT_EQ(j["status"], "submit_failed");
  expect_contains(j["status_note"].get<std::string>(), "Invalid partition name specified");
  auto st = run_llmprof({"sweep", "status", dir.file("s")});
  EXPECT_EQ(st.exit_code, 0) << st.output;
  expect_contains(st.output, "(launcher slurm, submit_failed)");
  expect_contains(st.output, "state:    submit_failed: sbatch refused the job");
  expect_contains(st.output, "none of its points was queued");
  EXPECT_FALSE(std::filesystem::exists(dir.file("s/slurm/submissions.csv")));
}

TEST(SweepSlurm, ReportJobRefusedAfterTheArraySaysTheArrayRunsAndHowToReport) {
  ScratchDir dir;
  // Accepts the array (job 101), refuses the report job.
  const std::string calls = dir.file("calls.txt");
  PathWith path(fake_sbatch(dir, "echo \"$@\" >> '" + calls +
                                     "'\n"
                                     "if [ $(wc -l < '" +
                                     calls +
                                     "') -eq 1 ]; then echo 101; exit 0; fi\n"
                                     "echo 'sbatch: error: Job dependency problem' >&2\nexit 1\n"));
  auto r = run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3", "--launcher", "slurm"}));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output,
                  "sbatch: error: Job dependency problem; the array job 101 was "
                  "submitted and runs the points");
  expect_contains(r.output, "llmprof report " + dir.file("s"));
  EXPECT_EQ(read_json(dir.file("s/sweep.json"))["status"], "submitted");
  const auto rows = test::csv_rows(dir.file("s/slurm/submissions.csv"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("array_job_id"), "101");
  EXPECT_EQ(rows[0].at("report_job_id"), "");
}

TEST(SweepThreads, SetThreadsIsWhatTheSweepLogsRecordsAndMeasuresThePeakWith) {
  ScratchDir dir;
  // profile.peak_flops_per_s=0: the sweep measures one MFU peak for its points, at their threads.
  auto r =
      run_llmprof(sweep_args(dir, {"--grid", "optim.lr=1e-3", "--set", "threads=1", "--set",
                                   "schedule.max_steps=5", "--set", "profile.peak_flops_per_s=0"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "replaces the sweep's split (cores / jobs: ");
  expect_contains(r.output, "each point runs 1 thread\n");
  expect_contains(r.output, "1 at a time, 1 thread each");
  const auto j = read_json(dir.file("s/sweep.json"));
  EXPECT_EQ(j["threads_per_point"], 1);
  EXPECT_EQ(j["threads_source"], "--set threads=1");
  EXPECT_EQ(j["peak_source"],
            "measured once by the sweep: llmprof peak --threads 1 --precision fp32");
  const auto rows = test::csv_rows(dir.file("s/sweep.csv"));
  ASSERT_EQ(rows.size(), 1u);
  expect_contains(test::read_file(rows[0].at("run_dir") + "/config.yaml"), "threads: 1 ");
}

TEST(SweepThreads, SweptThreadsAreNotOneFigureInSweepJson) {
  ScratchDir dir;
  auto r = run_llmprof(
      sweep_args(dir, {"--grid", "threads=1,2", "--set", "schedule.max_steps=5", "--quiet"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = read_json(dir.file("s/sweep.json"));
  EXPECT_TRUE(j["threads_per_point"].is_null()) << j["threads_per_point"];
  EXPECT_EQ(j["threads_source"], "the grid's threads axis (per point)");
}

}  // namespace
}  // namespace llmprof
