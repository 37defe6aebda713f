// Data-parallel training, end to end: ranks started as `llmprof train` processes with a
// torchrun-style environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), one thread
// each, every wait bounded. Two ranks of batch b against one rank of batch 2b at dropout 0: the
// same loss per step and eval loss, the same parameters on both ranks; one gradient's bytes
// all-reduced per optimizer step whatever the accumulation; rank 0's all-reduce time per step over
// the steady steps; overlap on and off alike; a killed rank ends the other within ddp.timeout_s,
// naming it, its finished rows kept.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ddp/ranks.h"
#include "llmprof/base/stats.h"
#include "support/test_support.h"

namespace llmprof::test {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> column(const std::string& path, const std::string& name) {
  std::vector<double> v;
  for (const auto& row : read_csv(path)) v.push_back(std::stod(row.at(name)));
  return v;
}

void expect_close(const std::vector<double>& a, const std::vector<double>& b, double rel,
                  const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_FALSE(a.empty()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], rel * std::abs(b[i])) << what << " row " << i;
  }
}

// Rank 0's all-reduce time per step in the merged summary: its first step's, and the median over
// the steady steps (after the first bucket layout; every step when there are none), as
// distributed.comm's figures are.
void expect_comm_ms_over_steady_steps(const std::string& top, size_t steps) {
  std::map<int64_t, double> comm_ms;
  std::set<int64_t> first_layout;
  for (const auto& row : read_csv(top + "/rank0/comm.csv")) {
    const int64_t step = std::stoll(row.at("step"));
    comm_ms[step] += std::stod(row.at("comm_ms"));
    if (row.at("first_layout") == "1") first_layout.insert(step);
  }
  std::vector<double> steady, every;
  for (const auto& [step, ms] : comm_ms) {
    every.push_back(ms);
    if (first_layout.count(step) == 0) steady.push_back(ms);
  }
  ASSERT_EQ(every.size(), steps);
  const nlohmann::json d = summary(top)["distributed"];
  const double want = *llmprof::median(steady.empty() ? every : steady);
  ASSERT_TRUE(d["rank0_comm_ms_per_step_median"].is_number()) << d.dump();
  EXPECT_NEAR(d["rank0_comm_ms_per_step_median"].get<double>(), want, 1e-9 * want);
  EXPECT_NEAR(d["rank0_comm_ms_first_step"].get<double>(), every.front(), 1e-9 * every.front());
}

TEST(DdpTrain, TwoRanksOfBatchBTrainAsOneRankOfBatchTwoB) {
  ScratchDir dir("ddp_equiv");
  const std::vector<std::string> common{"schedule.max_steps=6", "train.eval_interval=3"};
  std::vector<std::string> one = common, two = common;
  one.push_back("train.batch_size=8");
  two.push_back("train.batch_size=4");
  ASSERT_EQ(run_llmprof(train_args(dir.path(), "one", one)).exit_code, 0);
  const std::vector<int> codes = run_ranks(2, train_args(dir.path(), "two", two),
                                           dir.file("rank"));
  ASSERT_EQ(codes, (std::vector<int>{0, 0})) << read_file(dir.file("rank0.log"))
                                              << read_file(dir.file("rank1.log"));
  const std::string top = dir.file("two");
  // The global loss (mean of the ranks' losses) is the one rank's loss, step by step.
  expect_close(column(top + "/steps.csv", "loss"), column(dir.file("one") + "/steps.csv", "loss"),
               1e-5, "train loss");
  // Eval: each rank's slice, sums added over ranks: the one rank's eval loss.
  expect_close(column(top + "/rank0/eval.csv", "loss"),
               column(dir.file("one") + "/eval.csv", "loss"), 1e-5, "eval loss");
  expect_close(column(top + "/rank1/eval.csv", "loss"), column(top + "/rank0/eval.csv", "loss"),
               0, "eval loss of rank 1");
  // The same parameters on both ranks after the run.
  const auto d0 = summary(top + "/rank0")["distributed"]["parameter_digest"];
  const auto d1 = summary(top + "/rank1")["distributed"]["parameter_digest"];
  ASSERT_TRUE(d0.is_string());
  EXPECT_EQ(d0, d1);
  // The top summary's distributed section; each rank directory readable alone.
  const nlohmann::json s = summary(top);
  EXPECT_EQ(s["distributed"]["world_size"], 2);
  EXPECT_EQ(s["distributed"]["backend"], "gloo");
  EXPECT_EQ(run_llmprof({"report", top + "/rank1"}).exit_code, 0);
  expect_comm_ms_over_steady_steps(top, 6);
}

// One step: its buckets are the first layout's and no later step exists, so the steady steps are
// every step and rank 0's median is that step's all-reduce time.
TEST(DdpTrain, OneStepsCommMedianIsThatStepsAllReduceTime) {
  ScratchDir dir("ddp_one_step");
  const std::vector<int> codes =
      run_ranks(2, train_args(dir.path(), "one", {"schedule.max_steps=1", "train.eval_interval=0"}),
                dir.file("rank"));
  ASSERT_EQ(codes, (std::vector<int>{0, 0})) << read_file(dir.file("rank0.log"));
  expect_comm_ms_over_steady_steps(dir.file("one"), 1);
}

TEST(DdpTrain, AllReducesOneGradientsBytesPerOptimizerStepWithAccumulation) {
  ScratchDir dir("ddp_accum");
  const std::vector<int> codes = run_ranks(
      2,
      train_args(dir.path(), "acc",
                 {"schedule.max_steps=3", "train.batch_size=2", "train.grad_accum_steps=4",
                  "train.eval_interval=0"}),
      dir.file("rank"));
  ASSERT_EQ(codes, (std::vector<int>{0, 0})) << read_file(dir.file("rank0.log"));
  const std::string top = dir.file("acc");
  const auto params = summary(top + "/rank0")["parameters"].get<int64_t>();
  for (int r = 0; r < 2; ++r) {
    std::map<int64_t, int64_t> bytes_per_step;
    for (const auto& row : read_csv(top + "/rank" + std::to_string(r) + "/comm.csv")) {
      bytes_per_step[std::stoll(row.at("step"))] += std::stoll(row.at("bytes"));
      EXPECT_EQ(row.at("dtype"), "f32");
    }
    ASSERT_EQ(bytes_per_step.size(), 3u) << "rank " << r;  // one synchronising step each
    for (const auto& [step, bytes] : bytes_per_step) {
      EXPECT_EQ(bytes, params * 4) << "rank " << r << " step " << step;
    }
  }
  EXPECT_EQ(read_csv(top + "/comm.csv").size(), read_csv(top + "/rank0/comm.csv").size() * 2);
}

TEST(DdpTrain, OverlapOnAndOffGiveTheSameLosses) {
  ScratchDir dir("ddp_overlap");
  const std::vector<std::string> common{"schedule.max_steps=4", "train.batch_size=2",
                                        "train.eval_interval=0"};
  std::vector<std::string> off = common;
  off.push_back("ddp.overlap=false");
  ASSERT_EQ(run_ranks(2, train_args(dir.path(), "on", common), dir.file("on")),
            (std::vector<int>{0, 0}));
  ASSERT_EQ(run_ranks(2, train_args(dir.path(), "off", off), dir.file("off")),
            (std::vector<int>{0, 0}));
  expect_close(column(dir.file("off") + "/steps.csv", "loss"),
               column(dir.file("on") + "/steps.csv", "loss"), 1e-6, "overlap off vs on");
  EXPECT_EQ(summary(dir.file("off"))["distributed"]["overlap"], false);
}

TEST(DdpTrain, AGlobalBatchLargerThanTheTrainingDataIsAnError) {
  ScratchDir dir("ddp_split");
  // 1000 generated characters, 10% held out: 900 training tokens hold 868 windows of 32; two
  // ranks of batch 500 ask for 1000 distinct samples per micro-step.
  const std::vector<int> codes = run_ranks(
      2,
      train_args(dir.path(), "split",
                 {"data.generated_chars=1000", "data.val_fraction=0.1", "train.batch_size=500",
                  "schedule.max_steps=1", "train.eval_interval=0"}),
      dir.file("rank"));
  EXPECT_EQ(codes, (std::vector<int>{2, 2})) << read_file(dir.file("rank0.log"));
  expect_contains(read_file(dir.file("rank0.log")), "train.batch_size 500");
}

TEST(DdpTrain, RanksWithDifferentConfigsAreRefused) {
  ScratchDir dir("ddp_config");
  const int port = free_port();
  std::vector<int> pids;
  for (int r = 0; r < 2; ++r) {
    const std::string layers = "model.n_layer=" + std::to_string(r + 1);
    pids.push_back(spawn_with_env(
        train_args(dir.path(), "cfg", {layers, "schedule.max_steps=1"}),
        {{"RANK", std::to_string(r)}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", std::to_string(r)},
         {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(port)}},
        dir.file("rank" + std::to_string(r) + ".log")));
  }
  EXPECT_EQ(wait_bounded(pids[0], 60), 2) << read_file(dir.file("rank0.log"));
  EXPECT_EQ(wait_bounded(pids[1], 60), 2) << read_file(dir.file("rank1.log"));
}

TEST(DdpTrain, AKilledRankEndsTheOtherWithinTheTimeoutNamingIt) {
  ScratchDir dir("ddp_kill");
  const int port = free_port();
  const auto args = train_args(dir.path(), "kill",
                               {"schedule.max_steps=100000", "train.batch_size=2",
                                "train.eval_interval=0", "ddp.timeout_s=10"});
  std::vector<int> pids;
  for (int r = 0; r < 2; ++r) {
    pids.push_back(spawn_with_env(args,
                                  {{"RANK", std::to_string(r)}, {"WORLD_SIZE", "2"},
                                   {"LOCAL_RANK", std::to_string(r)},
                                   {"MASTER_ADDR", "127.0.0.1"},
                                   {"MASTER_PORT", std::to_string(port)}},
                                  dir.file("rank" + std::to_string(r) + ".log")));
  }
  const std::string rank0_steps = dir.file("kill") + "/rank0/steps.csv";
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline && read_csv(rank0_steps).size() < 3) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(read_csv(rank0_steps).size(), 3u) << read_file(dir.file("rank0.log"));
  ::kill(pids[1], SIGKILL);
  EXPECT_EQ(wait_bounded(pids[1], 10), 128 + SIGKILL);
  const auto t0 = Clock::now();
  const int code = wait_bounded(pids[0], 10 + 20);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_NE(code, 0);
  EXPECT_LT(took, 10 + 5) << "beyond ddp.timeout_s";
  expect_contains(read_file(dir.file("rank0.log")), "rank 1");
  EXPECT_GE(read_csv(rank0_steps).size(), 3u) << "the survivor's finished rows remain";
  EXPECT_EQ(summary(dir.file("kill") + "/rank0")["status"], "failed");
}

// train.resume_from, two ranks at dropout 0.1 (each rank's own dropout stream): 10 steps with a
// checkpoint at 5 against 5 resumed steps from it, every rank restoring its own random state.
TEST(DdpTrain, TwoRanksResumedFromStepFiveMatchTenStepsAtDropout) {
  ScratchDir dir("ddp_resume");
  const std::vector<std::string> common{"model.dropout=0.1", "schedule.max_steps=10",
                                        "train.batch_size=2", "train.eval_interval=5"};
  std::vector<std::string> ten = common, resumed = common;
  ten.insert(ten.end(), {"train.save_checkpoint=true", "train.checkpoint_interval=5"});
  ASSERT_EQ(run_ranks(2, train_args(dir.path(), "ten", ten), dir.file("ten")),
            (std::vector<int>{0, 0})) << read_file(dir.file("ten0.log"));
  const std::string ckpt = dir.file("ten") + "/rank0/checkpoint-step5";
  for (const char* f : {"model.pt", "optimizer.pt", "rng-rank0.pt", "rng-rank1.pt"}) {
    EXPECT_TRUE(read_file(ckpt + "/" + f).size() > 0) << f;
  }
  resumed.push_back("train.resume_from=" + ckpt);
  ASSERT_EQ(run_ranks(2, train_args(dir.path(), "resumed", resumed), dir.file("resumed")),
            (std::vector<int>{0, 0})) << read_file(dir.file("resumed0.log"))
                                      << read_file(dir.file("resumed1.log"));
  // The global loss (the top steps.csv) and every rank's own (their dropout masks differ),
  // steps 6..10.
  for (const char* table : {"/steps.csv", "/rank0/steps.csv", "/rank1/steps.csv"}) {
    const auto rows = read_csv(dir.file("resumed") + table);
    const auto want = read_csv(dir.file("ten") + table);
    ASSERT_EQ(rows.size(), 5u) << table;
    ASSERT_EQ(want.size(), 10u) << table;
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].at("step"), want[i + 5].at("step"));
      const double a = std::stod(rows[i].at("loss")), b = std::stod(want[i + 5].at("loss"));
      EXPECT_NEAR(a, b, 1e-6 * std::abs(b)) << table << " at step " << rows[i].at("step");
    }
  }
  // One rank cannot resume two ranks' random states.
  const CommandResult one = run_llmprof(train_args(dir.path(), "one", resumed));
  EXPECT_EQ(one.exit_code, 2) << one.output;
  expect_contains(one.output, "train.resume_from");
  expect_contains(one.output, "--nproc 2");
}

}  // namespace
}  // namespace llmprof::test
