// Two ranks as two processes over Gloo on loopback: broadcast, DDP's averaging and buckets,
// no_sync, overlap on and off, eval sums, the config hash check, and dead or stopped peers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

#include <torch/torch.h>

#include "llmprof/dist/grad_sync.h"
#include "llmprof/dist/process_group.h"
#include "ranks.h"
#include "scenarios.h"

namespace llmprof::test {
namespace {

constexpr double kTimeoutS = 3.0;   // GroupOptions.timeout_s of every scenario
constexpr double kDeadlineS = 30.0; // run_ranks kills whatever is left after this

// The child side: run the scenario named in the environment, report, and leave at once.
TEST(DistWorker, RunsTheScenarioOfThisRank) {
  const std::string name = rank_scenario();
  if (name.empty()) GTEST_SKIP() << "runs only inside a rank started by run_ranks";
  torch::set_num_threads(1);
  int code = 0;
  try {
    dist_scenarios().at(name)();
  } catch (const dist::DistError& e) {
    rank_write("error", e.what());
    rank_write("failed_rank", std::to_string(e.failed_rank()));
    code = e.exit_code();
  } catch (const Error& e) {
    rank_write("error", e.what());
    code = e.exit_code();
  } catch (const std::exception& e) {
    rank_write("error", e.what());
    code = 3;
  }
  _exit(code);  // no static destructors in a rank: the parent reads the exit code
}

std::vector<float> floats(const std::string& text) {
  std::istringstream in(text);
  std::vector<float> v;
  float x;
  while (in >> x) v.push_back(x);
  return v;
}

void expect_ok(const std::vector<RankResult>& ranks) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    EXPECT_EQ(ranks[r].exit_code, 0) << "rank " << r << ": " << field(ranks[r], "error");
  }
}

TEST(DistGroup, BroadcastMakesEveryRankHoldRankZerosParameters) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("broadcast", 2, kDeadlineS);
  expect_ok(ranks);
  auto before0 = floats(field(ranks[0], "before")), before1 = floats(field(ranks[1], "before"));
  auto after0 = floats(field(ranks[0], "after")), after1 = floats(field(ranks[1], "after"));
  ASSERT_EQ(before0.size(), 4u * (128 * 128 + 128));
  EXPECT_NE(before0, before1);  // different seeds
  EXPECT_EQ(after0, before0);
  EXPECT_EQ(after1, before0);
}

// (g0 + g1) / 2 in float32, element by element, from the ranks' own unsynchronised gradients.
void expect_average(const std::vector<RankResult>& ranks) {
  auto g0 = floats(field(ranks[0], "local")), g1 = floats(field(ranks[1], "local"));
  ASSERT_EQ(g0.size(), g1.size());
  ASSERT_FALSE(g0.empty());
  for (int r = 0; r < 2; ++r) {
    auto synced = floats(field(ranks[r], "synced"));
    ASSERT_EQ(synced.size(), g0.size());
    size_t differ = 0;
    for (size_t i = 0; i < g0.size(); ++i) differ += synced[i] != (g0[i] + g1[i]) / 2.0f;
    EXPECT_EQ(differ, 0u) << "rank " << r << ": elements not (g0+g1)/2";
  }
  EXPECT_NE(g0, g1);
}

TEST(DistGradSync, AveragesGradientsExactly) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("accumulate", 2, kDeadlineS, {{"MICRO", "1"}});
  expect_ok(ranks);
  expect_average(ranks);
  EXPECT_EQ(field(ranks[0], "record_bytes"), field(ranks[0], "grad_bytes"));
}

TEST(DistGradSync, NoSyncMicroStepsDoNotCommunicateAndBytesCountOnce) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("accumulate", 2, kDeadlineS, {{"MICRO", "4"}});
  expect_ok(ranks);
  expect_average(ranks);  // the average of each rank's 4-micro-step sum
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(field(ranks[r], "records_before_last"), "0");
    EXPECT_EQ(field(ranks[r], "records"), "4");  // 4 buckets of (weight, bias)
    // 4 x (128 x 128 + 128) floats x 4 B = 264192 B, all-reduced once per optimizer step
    EXPECT_EQ(field(ranks[r], "record_bytes"), "264192");
    EXPECT_EQ(field(ranks[r], "grad_bytes"), "264192");
  }
}

TEST(DistGradSync, RecordOffKeepsTheNumbersAndRecordsNothing) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("accumulate", 2, kDeadlineS, {{"MICRO", "2"}, {"RECORD", "0"}});
  expect_ok(ranks);
  expect_average(ranks);
  EXPECT_EQ(field(ranks[0], "records"), "0");
  EXPECT_EQ(field(ranks[1], "records"), "0");
}

TEST(DistGradSync, TensorListedTwiceIsSynchronisedOnce) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("accumulate", 2, kDeadlineS, {{"MICRO", "1"}, {"DUP", "1"}});
  expect_ok(ranks);
  expect_average(ranks);
  EXPECT_EQ(field(ranks[0], "record_bytes"), "264192");
}

std::vector<RankResult> run_steps(bool overlap) {
  return run_ranks("steps", 2, kDeadlineS, {{"OVERLAP", overlap ? "1" : "0"}});
}

TEST(DistGradSync, BucketsFollowReverseParameterOrderThenAreRebuilt) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_steps(true);
  expect_ok(ranks);
  for (int r = 0; r < 2; ++r) {
    // Parameters 0..7 are (w0, b0, ..., w3, b3); caps of 64 KiB close a bucket at each weight.
    EXPECT_EQ(field(ranks[r], "layout0"), "7,6|5,4|3,2|1,0");
    EXPECT_EQ(field(ranks[r], "rebuilt"), "1");
    // Every step all-reduces each gradient byte once: 4 x (16384 + 128) x 4 B.
    for (int s = 0; s < 3; ++s) {
      std::string row = field(ranks[r], "step" + std::to_string(s));
      EXPECT_NE(row.find("bytes 264192 numel 66048 "), std::string::npos) << row;
      EXPECT_NE(row.find("ordered 1"), std::string::npos) << row;
      EXPECT_NE(row.find("timed 1"), std::string::npos) << row;
      EXPECT_NE(row.find(s == 0 ? "first 1" : "first 0"), std::string::npos) << row;
    }
  }
  EXPECT_EQ(field(ranks[0], "layout3"), field(ranks[1], "layout3"));
}

TEST(DistGradSync, OverlapLaunchesAllButTheLastBucketBeforeBackwardEnds) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto on = run_steps(true);
  auto off = run_steps(false);
  expect_ok(on);
  expect_ok(off);
  for (int r = 0; r < 2; ++r) {
    for (int s = 0; s < 3; ++s) {
      std::string key = "step" + std::to_string(s);
      EXPECT_NE(field(on[r], key).find("records 4 "), std::string::npos) << field(on[r], key);
      EXPECT_NE(field(on[r], key).find("before_end 3 "), std::string::npos) << field(on[r], key);
      EXPECT_NE(field(off[r], key).find("before_end 0 "), std::string::npos) << field(off[r], key);
    }
    EXPECT_EQ(field(on[r], "synced"), field(off[r], "synced"));  // the same numbers either way
  }
}

TEST(DistGroup, EvalSumsGatherAndBarrier) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("eval_sums", 2, kDeadlineS);
  expect_ok(ranks);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(field(ranks[r], "sums"), "4 0.25");                       // 1.5+2.5, 0+0.25
    EXPECT_EQ(field(ranks[r], "counts"), "21 3298534883328");            // 2^40 + 2^41
    EXPECT_EQ(field(ranks[r], "gathered"), "100 -0 101 -1");
  }
}

TEST(DistGroup, ConfigHashMismatchNamesTheRank) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("config_hash", 2, kDeadlineS);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ranks[r].exit_code, kExitUsage) << field(ranks[r], "error");
    std::string e = field(ranks[r], "error");
    EXPECT_NE(e.find("rank 1 (hash-b) against rank 0 (hash-a)"), std::string::npos) << e;
    EXPECT_EQ(field(ranks[r], "failed_rank"), "1");
  }
}

// The survivor ends within the timeout with a one-line error naming the victim.
void expect_named(const std::vector<RankResult>& ranks, int survivor, const std::string& needle,
                  int victim) {
  const RankResult& s = ranks[survivor];
  std::string e = field(s, "error");
  EXPECT_EQ(s.exit_code, kExitRuntime) << e;
  EXPECT_NE(e.find(needle), std::string::npos) << e;
  EXPECT_EQ(field(s, "failed_rank"), std::to_string(victim)) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  double elapsed = std::stod("0" + field(s, "elapsed_s"));
  EXPECT_GT(elapsed, 0.0) << e;
  EXPECT_LE(elapsed, kTimeoutS) << e;
}

TEST(DistFaults, KilledPeerIsNamed) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("fault", 2, kDeadlineS, {{"FAULT", "kill"}, {"VICTIM", "1"}}, 0);
  expect_named(ranks, 0, "rank 1 (last heartbeat", 1);
  EXPECT_EQ(ranks[1].signal, SIGKILL);
}

TEST(DistFaults, KilledStoreHostIsNamed) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("fault", 2, kDeadlineS, {{"FAULT", "kill"}, {"VICTIM", "0"}}, 1);
  expect_named(ranks, 1, "rank 0 (the store host) is gone", 0);
}

TEST(DistFaults, StoppedPeerIsNamedWithinTheTimeout) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("fault", 2, kDeadlineS, {{"FAULT", "stop"}, {"VICTIM", "1"}}, 0);
  expect_named(ranks, 0, "rank 1 (last heartbeat", 1);
}

TEST(DistFaults, StoppedStoreHostIsNamedWithinTheTimeout) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("fault", 2, kDeadlineS, {{"FAULT", "stop"}, {"VICTIM", "0"}}, 1);
  expect_named(ranks, 1, "rank 0 (the store host) does not answer", 0);
}

TEST(DistFaults, PeerKilledBeforeBackwardFailsTheGradientAllReduce) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  auto ranks = run_ranks("fault", 2, kDeadlineS,
                         {{"FAULT", "kill"}, {"VICTIM", "1"}, {"WHERE", "backward"}}, 0);
  expect_named(ranks, 0, "gradient all-reduce failed on rank 0: rank 1", 1);
}

TEST(DistGroup, BusyMasterPortIsAUsageError) {
  if (!dist::built_with_c10d()) GTEST_SKIP() << "built without c10d";
  dist::RankEnv env;
  env.world_size = 2;
  env.rank = 0;
  // Hold a listening port, then ask rank 0 to host the store on it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  env.master_port = ntohs(addr.sin_port);
  dist::GroupOptions options;
  options.timeout_s = 2;
  try {
    dist::ProcessGroup::create(env, options);
    ADD_FAILURE() << "no error";
  } catch (const dist::DistError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find(std::to_string(env.master_port) + " is in use"),
              std::string::npos) << e.what();
  }
  close(fd);
}

TEST(DistGroup, WorldSizeTwoWithoutC10dIsAUsageError) {
  if (dist::built_with_c10d()) GTEST_SKIP() << "built with c10d (a -DLLMPROF_WITH_DIST=OFF build checks this)";
  dist::RankEnv env;
  env.world_size = 2;
  try {
    dist::ProcessGroup::create(env, dist::GroupOptions{});
    ADD_FAILURE() << "no error";
  } catch (const dist::DistError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("built without c10d"), std::string::npos) << e.what();
  }
}

TEST(DistGroup, WorldSizeOneNeedsNoRendezvous) {
  dist::GroupOptions options;
  auto group = dist::ProcessGroup::create(dist::RankEnv{}, options);
  std::vector<double> v{2.5};
  group->all_reduce_sum(v);
  EXPECT_EQ(v[0], 2.5);
  EXPECT_EQ(group->all_gather({1.0, 2.0}), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(group->world_size(), 1);
  EXPECT_EQ(group->native_handle(), nullptr);
}

// One rank on a real c10d group: GradSync's gradients equal plain backward's (an average over
// one rank) and every gradient byte is recorded once. On CPU over Gloo; on a CUDA host over NCCL
// too (one GPU allows one rank).
void one_rank_matches_plain_backward(config::DdpBackend backend, torch::Device device) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  dist::RankEnv env;
  env.master_port = ntohs(addr.sin_port);
  dist::GroupOptions options;
  options.backend = backend;
  options.timeout_s = 10;
  options.c10d_for_one_rank = true;
  options.cuda_device = device.is_cuda() ? device.index() : -1;
  auto group = dist::ProcessGroup::create(env, options);
  torch::manual_seed(3);
  torch::nn::Sequential model(torch::nn::Linear(64, 64), torch::nn::Functional(torch::tanh),
                              torch::nn::Linear(64, 8));
  model->to(device);
  group->broadcast_module(*model);
  auto plain = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(model->clone(device));
  dist::GradSyncOptions sync_options;
  sync_options.bucket_mb = sync_options.first_bucket_mb = 0.01;
  dist::GradSync sync(*group, model->parameters(), sync_options);
  auto x = torch::randn({16, 64}, device);
  sync.begin_micro_step(true);
  sync.backward(model->forward(x).pow(2).mean());
  plain->forward(x).pow(2).mean().backward();
  auto a = model->parameters(), b = plain->parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i].grad(), b[i].grad())) << "parameter " << i;
  }
  int64_t bytes = 0;
  for (const auto& r : sync.take_step_records()) bytes += r.bytes;
  EXPECT_EQ(bytes, (64 * 64 + 64 + 64 * 8 + 8) * 4);
  std::vector<double> sums{1.25};
  group->all_reduce_sum(sums);
  EXPECT_EQ(sums[0], 1.25);
}

TEST(DistGroup, OneRankGlooGroupMatchesPlainBackward) {
  if (!dist::built_with_backend(config::DdpBackend::kGloo)) GTEST_SKIP() << "built without Gloo";
  one_rank_matches_plain_backward(config::DdpBackend::kGloo, torch::kCPU);
}

TEST(DistGroup, OneRankNcclGroupMatchesPlainBackwardOnTheGpu) {
  if (!dist::built_with_backend(config::DdpBackend::kNccl)) GTEST_SKIP() << "built without NCCL";
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  one_rank_matches_plain_backward(config::DdpBackend::kNccl, torch::Device(torch::kCUDA, 0));
}

}  // namespace
}  // namespace llmprof::test
