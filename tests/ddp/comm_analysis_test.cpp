// The communication analysis of a data-parallel run, end to end on 2 local ranks of one thread:
// a clock skew injected on rank 1 recovered within 50 us; a delay injected in rank 1's forward
// named as the straggler, in forward, with its lag within 10%; the temporal breakdown adding up
// to each step; overlap off giving no hidden communication. The helpers are those of
// ddp_train_test.cpp (process start, bounded waits).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.h"

namespace llmprof::test {
namespace {

using Clock = std::chrono::steady_clock;

// A port nobody listens on now (bound to 0, read back, released).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Starts llmprof with args and extra environment variables, output to log_path.
int spawn_with_env(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env, const std::string& log_path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    const std::string bin = llmprof_binary();
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// Exit status of pid within seconds; kills it (and fails the test) when it overruns.
int wait_bounded(int pid, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ADD_FAILURE() << "pid " << pid << " still running after " << seconds << " s: killed";
  return -1;
}

// The common arguments of a tiny run: dropout 0, one thread, few steps, scratch output.
std::vector<std::string> train_args(const std::string& out, const std::string& name,
                                    const std::vector<std::string>& sets) {
  std::vector<std::string> a{"train", "--config", kTinyConfig, "--quiet",
                             "--set", "output.dir=" + out, "--set", "output.name=" + name,
                             "--set", "model.dropout=0", "--set", "threads=1",
                             "--set", "data.num_workers=0", "--set", "ddp.timeout_s=30",
                             "--set", "energy.enabled=false"};
  for (const std::string& s : sets) {
    a.push_back("--set");
    a.push_back(s);
  }
  return a;
}

// Runs `world` ranks to completion (bounded) and returns their exit codes.
std::vector<int> run_ranks(int world, const std::vector<std::string>& args,
                           const std::string& log_stem,
                           const std::map<std::string, std::string>& extra_env = {}) {
  const int port = free_port();
  std::vector<int> pids;
  for (int r = 0; r < world; ++r) {
    std::map<std::string, std::string> env = extra_env;
    env["RANK"] = std::to_string(r);
    env["WORLD_SIZE"] = std::to_string(world);
    env["LOCAL_RANK"] = std::to_string(r);
    env["MASTER_ADDR"] = "127.0.0.1";
    env["MASTER_PORT"] = std::to_string(port);
    pids.push_back(spawn_with_env(args, env, log_stem + std::to_string(r) + ".log"));
  }
  std::vector<int> codes;
  for (int pid : pids) codes.push_back(wait_bounded(pid, 240));
  return codes;
}

// A CSV as rows of named fields.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::istringstream in(read_file(path));
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ls(line);
    std::string f;
    while (std::getline(ls, f, ',')) fields.push_back(f);
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json summary(const std::string& dir) {
  return nlohmann::json::parse(read_file(dir + "/summary.json"), nullptr, false);
}


// Small buckets so that the tiny model's gradient makes several (overlap has something to hide).
const std::vector<std::string> kSmallBuckets{"ddp.bucket_mb=0.02", "ddp.first_bucket_mb=0.02",
                                             "train.eval_interval=0"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::string run_two(const ScratchDir& dir, const std::string& name,
                    const std::vector<std::string>& sets,
                    const std::map<std::string, std::string>& env) {
  const std::vector<int> codes =
      run_ranks(2, train_args(dir.path(), name, sets), dir.file(name + "_rank"), env);
  EXPECT_EQ(codes, (std::vector<int>{0, 0})) << read_file(dir.file(name + "_rank0.log"))
                                             << read_file(dir.file(name + "_rank1.log"));
  return dir.file(name);
}

TEST(CommAnalysis, RecoversAnInjectedClockSkewWithin50Us) {
  ScratchDir dir("comm_skew");
  const std::string top = run_two(dir, "skew", with(kSmallBuckets, {"schedule.max_steps=4"}),
                                  {{"LLMPROF_TEST_CLOCK_SKEW_US", "1:-250000"}});
  const auto rows = read_csv(top + "/clocks.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::stoll(rows[0].at("start_offset_ns")), 0);
  const double start = std::stod(rows[1].at("start_offset_ns"));
  const double end = std::stod(rows[1].at("end_offset_ns"));
  EXPECT_NEAR(start, -250e6, 50e3) << "start residual " << rows[1].at("start_residual_ns");
  EXPECT_NEAR(end, -250e6, 50e3) << "end residual " << rows[1].at("end_residual_ns");
  // Aligned, both ranks' launches of one collective are close (ms apart, not 250 ms).
  for (const auto& c : read_csv(top + "/collectives.csv")) {
    EXPECT_LT(std::abs(std::stod(c.at("wait_ms"))), 100) << c.at("step") << "/" << c.at("bucket");
  }
}

TEST(CommAnalysis, NamesADelayedRankAndItsForwardAsTheStraggler) {
  ScratchDir dir("comm_straggler");
  const double delay_ms = 100;  // large against this host's scheduling noise (ms)
  const std::string top = run_two(dir, "late", with(kSmallBuckets, {"schedule.max_steps=8"}),
                                  {{"LLMPROF_TEST_FORWARD_DELAY_MS", "1:100"}});
  const nlohmann::json s = summary(top)["distributed"]["comm"];
  ASSERT_TRUE(s["straggler"].is_object()) << s.dump(2);
  EXPECT_EQ(s["straggler"]["rank"], 1) << s.dump(2);
  EXPECT_EQ(s["straggler"]["phase"], "forward") << s.dump(2);
  EXPECT_NEAR(s["straggler"]["lag_ms"].get<double>(), delay_ms, 0.1 * delay_ms) << s.dump(2);
  // Rank 0 waits for rank 1 in the all-reduces: by about the delay (median), rank 1 not at all.
  std::vector<double> waits0;
  for (const auto& c : read_csv(top + "/collectives.csv")) {
    if (c.at("first_layout") != "0") continue;
    if (c.at("rank") == "0") waits0.push_back(std::stod(c.at("wait_ms")));
    if (c.at("rank") == "1") EXPECT_EQ(std::stod(c.at("wait_ms")), 0);
  }
  ASSERT_FALSE(waits0.empty());
  std::sort(waits0.begin(), waits0.end());
  EXPECT_NEAR(waits0[waits0.size() / 2], delay_ms, 0.1 * delay_ms);
}

void expect_breakdown_adds_up(const std::string& top) {
  const auto rows = read_csv(top + "/comm_steps.csv");
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    const double sum = std::stod(r.at("compute_ms")) + std::stod(r.at("exposed_comm_ms")) +
                       std::stod(r.at("other_ms")) + std::stod(r.at("idle_ms"));
    EXPECT_NEAR(sum, std::stod(r.at("step_ms")), 1e-6) << "step " << r.at("step") << " rank "
                                                       << r.at("rank");
  }
}

TEST(CommAnalysis, BreakdownAddsUpToTheStepAndOverlapOffHidesNothing) {
  ScratchDir dir("comm_overlap");
  const std::string on = run_two(dir, "on", with(kSmallBuckets, {"schedule.max_steps=5"}), {});
  const std::string off = run_two(
      dir, "off", with(kSmallBuckets, {"schedule.max_steps=5", "ddp.overlap=false"}), {});
  expect_breakdown_adds_up(on);
  expect_breakdown_adds_up(off);
  for (const auto& r : read_csv(off + "/comm_steps.csv")) {
    EXPECT_NEAR(std::stod(r.at("exposed_comm_ms")), std::stod(r.at("comm_ms")), 1e-6);
    EXPECT_NEAR(std::stod(r.at("overlap")), 0, 1e-9);
  }
  const nlohmann::json s_off = summary(off)["distributed"]["comm"];
  const nlohmann::json s_on = summary(on)["distributed"]["comm"];
  EXPECT_NEAR(s_off["overlap"].get<double>(), 0, 1e-9) << s_off.dump(2);
  EXPECT_GT(s_on["overlap"].get<double>(), 0) << s_on.dump(2);
  EXPECT_GT(s_on["busbw_gb_per_s_median"].get<double>(), 0);
  // Every rank wrote its phase spans: 4 per step at one micro-batch.
  EXPECT_EQ(read_csv(on + "/rank1/phases.csv").size(), 5u * 4);
}

}  // namespace
}  // namespace llmprof::test
