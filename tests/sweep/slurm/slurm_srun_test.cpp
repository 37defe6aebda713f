// `srun -n 2 llmprof train` on the one-node cluster that slurm_sweep_test.cpp's main starts: each
// Slurm task is a rank (SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID, the job's first host as the
// master), with no launcher flag; and --nproc under several tasks is refused before training.
// Every srun is bounded by timeout(1) and srun's own --time.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/csv_rows.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof {
namespace {

using test::expect_contains;
using test::ScratchDir;

struct Shell {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Shell run_shell(const std::string& cmd) {
  Shell r;
  if (FILE* f = ::popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, f) != nullptr) r.output += buf;
    const int st = ::pclose(f);
    r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  return r;
}

// "srun -n 2 ... llmprof train --config tiny --out DIR --set output.name=NAME <extra>", bounded.
std::string srun_train(const ScratchDir& dir, const std::string& name, const std::string& extra) {
  return "timeout -k 10 240 srun -n 2 --time=4 --kill-on-bad-exit=1 " + test::llmprof_binary() +
         " train --config " + test::kTinyConfig + " --out " + dir.path() +
         " --set output.name=" + name +
         " --set schedule.max_steps=4 --set train.eval_interval=0 --quiet " + extra;
}

// Two tasks need two processes and loopback TCP; where the environment has them, an srun of two
// ranks that fails is a failure of the test (its output shows why), never a skip.
#define SKIP_WITHOUT_TWO_PROCESSES()                                          \
  if (const std::string why = test::why_two_ranks_cannot_run(); !why.empty()) \
  GTEST_SKIP() << "this environment cannot run two ranks: " << why

TEST(SlurmSrun, NprocUnderSeveralTasksIsRefusedByEveryTask) {
  ScratchDir dir("llmprof-srun");
  const Shell r = run_shell(srun_train(dir, "refused", "--nproc 2"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  expect_contains(r.output, "--nproc 2 with SLURM_NTASKS=2");
  EXPECT_FALSE(fs::exists(dir.file("refused"))) << r.output;
}

TEST(SlurmSrun, TwoTasksTrainAsTwoRanksOfOneRun) {
  SKIP_WITHOUT_TWO_PROCESSES();
  ScratchDir dir("llmprof-srun");
  const Shell r = run_shell(srun_train(dir, "ddp", ""));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string run = dir.file("ddp");
  for (const char* rank : {"rank0", "rank1"}) {
    EXPECT_TRUE(fs::exists(run + "/" + rank + "/summary.json")) << rank << "\n" << r.output;
    EXPECT_TRUE(fs::exists(run + "/" + rank + "/steps.csv")) << rank;
  }
  const auto summary = nlohmann::json::parse(test::read_file(run + "/summary.json"));
  ASSERT_TRUE(summary.contains("distributed")) << summary.dump(1);
  EXPECT_EQ(summary["distributed"]["world_size"], 2);
  EXPECT_EQ(summary["status"], "completed");
  // The merged steps.csv: one row per global step.
  EXPECT_EQ(test::csv_rows(run + "/steps.csv").size(), 4u);
  EXPECT_TRUE(fs::exists(run + "/comm.csv"));
}

// The communication analysis of the same kind of run under srun as under --nproc: clocks.csv with
// both ranks, collectives.csv with one row per (step, bucket, rank) and its bus bandwidth and
// hidden/exposed split, comm_steps.csv with one row per (step, rank) whose breakdown adds up to
// the step, and summary.json distributed.comm with the overlap and the straggler; then the
// timeline and per-bucket overlap charts when gnuplot is here.
TEST(SlurmSrun, TwoTasksGetTheCommunicationAnalysis) {
  SKIP_WITHOUT_TWO_PROCESSES();
  ScratchDir dir("llmprof-srun");
  const Shell r = run_shell(srun_train(
      dir, "comm", "--set ddp.bucket_mb=0.02 --set ddp.first_bucket_mb=0.02 --set threads=1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string run = dir.file("comm");
  const auto summary = nlohmann::json::parse(test::read_file(run + "/summary.json"));
  const auto& dist = summary.at("distributed");
  EXPECT_EQ(dist.at("launcher"), "slurm") << dist.dump(1);
  const int64_t buckets = dist.at("bucket_count").get<int64_t>();
  ASSERT_GE(buckets, 2) << dist.dump(1);
  const auto& comm = dist.at("comm");
  EXPECT_TRUE(comm.at("overlap").is_number()) << comm.dump(1);
  EXPECT_TRUE(comm.at("busbw_gb_per_s_median").is_number()) << comm.dump(1);
  EXPECT_TRUE(comm.at("straggler").is_object()) << comm.dump(1);
  EXPECT_EQ(test::csv_rows(run + "/clocks.csv").size(), 2u);
  const auto coll = test::csv_rows(run + "/collectives.csv");
  // Steps 2-4 in the rebuilt layout (bucket_count buckets), step 1 in the first one.
  size_t later = 0;
  for (const auto& row : coll) later += row.at("first_layout") == "0" ? 1 : 0;
  EXPECT_EQ(later, static_cast<size_t>(3 * buckets * 2)) << coll.size();
  EXPECT_GE(coll.size() - later, 2u);
  for (const auto& row : coll) {
    EXPECT_EQ(row.at("world_size"), "2");
    EXPECT_GT(std::stod(row.at("busbw_gb_per_s")), 0);
    EXPECT_NEAR(std::stod(row.at("hidden_ms")) + std::stod(row.at("exposed_ms")),
                std::stod(row.at("duration_ms")), 1e-6);
  }
  const auto steps = test::csv_rows(run + "/comm_steps.csv");
  ASSERT_EQ(steps.size(), 8u);  // 4 steps x 2 ranks
  for (const auto& row : steps) {
    const double parts = std::stod(row.at("compute_ms")) + std::stod(row.at("exposed_comm_ms")) +
                         std::stod(row.at("other_ms")) + std::stod(row.at("idle_ms"));
    EXPECT_NEAR(parts, std::stod(row.at("step_ms")), 1e-6) << row.at("step");
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return;
  const Shell p = run_shell(test::llmprof_binary() + " plot " + run + " --out " +
                            dir.file("plots") + " --format svg");
  ASSERT_EQ(p.exit_code, 0) << p.output;
  EXPECT_TRUE(fs::exists(dir.file("plots/13_comm_timeline.svg"))) << p.output;
  EXPECT_TRUE(fs::exists(dir.file("plots/14_comm_overlap.svg"))) << p.output;
}

// `srun -n 2 llmprof peak --comm`: each task a rank of the all-reduce benchmark; rank 0 prints
// the table with a positive bus bandwidth for every size and writes comm_peak.csv.
TEST(SlurmSrun, PeakCommOnTwoTasksMeasuresTheBusBandwidth) {
  ScratchDir dir("llmprof-srun");
  const Shell r = run_shell("timeout -k 10 180 srun -n 2 --time=3 --kill-on-bad-exit=1 " +
                            test::llmprof_binary() +
                            " peak --comm --min-bytes 4K --max-bytes 32K --iters 3 "
                            "--warmup-iters 1 --timeout-s 60 --output " + dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "2 ranks, gloo");
  const auto rows = test::csv_rows(dir.file("comm_peak.csv"));
  ASSERT_EQ(rows.size(), 4u) << r.output;  // 4K, 8K, 16K, 32K
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("world_size"), "2");
    EXPECT_GT(std::stod(row.at("busbw_gb_per_s")), 0) << row.at("bytes");
  }
}

}  // namespace
}  // namespace llmprof
