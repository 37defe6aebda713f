// `llmprof train --nproc N` as a user runs it: the refusals that come before any rank starts
// (exit 2, one line naming the value), and N = 1 running in this process as without the flag.
// Two ranks of the tiny model as one run (skipped, naming why, only where the environment cannot
// fork a process or listen on loopback TCP), and the faults as a user meets them: a rank killed, a
// rank stopped, Ctrl-C. Every wait is bounded; a launch past its bound is killed and the test
// fails.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof {
namespace {

using test::expect_contains;
using test::run_llmprof;
using test::ScratchDir;

const std::string& kTiny = test::kTinyConfig;

// Sets an environment variable for one scope (the llmprof processes started inherit it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      ::unsetenv(name_);
    } else {
      ::setenv(name_, old_.c_str(), 1);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
};

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CliNproc, ZeroOrNegativeRanksExitTwoNamingTheValue) {
  for (const char* n : {"0", "-2"}) {
    auto r = run_llmprof({"train", "--config", kTiny, "--nproc", n});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    expect_contains(r.output, std::string("--nproc ") + n + ": give 1 or more ranks");
  }
}

TEST(CliNproc, UnderSrunWithSeveralTasksItIsAClearError) {
  ScopedEnv tasks("SLURM_NTASKS", "4");
  auto r = run_llmprof({"train", "--config", kTiny, "--nproc", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "--nproc 2 with SLURM_NTASKS=4");
  EXPECT_EQ(count_of(r.output, "\n"), 1u) << r.output;  // one line, no rank started
}

TEST(CliNproc, InsideALaunchedRankItIsRefused) {
  ScopedEnv launched("LLMPROF_LAUNCHED", "1");
  auto r = run_llmprof({"train", "--config", kTiny, "--nproc", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "already a rank started by --nproc");
}

TEST(CliNproc, ABusyMasterPortExitsTwoNamingIt) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof sa;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  const std::string port = std::to_string(ntohs(sa.sin_port));
  {
    ScopedEnv master_port("MASTER_PORT", port);
    auto r = run_llmprof({"train", "--config", kTiny, "--nproc", "2"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    expect_contains(r.output, "MASTER_PORT " + port + " is busy on 127.0.0.1");
  }
  ::close(fd);
  ScopedEnv bad_port("MASTER_PORT", "99999");
  auto r = run_llmprof({"train", "--config", kTiny, "--nproc", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "MASTER_PORT='99999' is not a TCP port");
}

TEST(CliNproc, ABadConfigIsReportedOnceBeforeAnyRankStarts) {
  auto r = run_llmprof({"train", "--config", kTiny, "--nproc", "2", "--set", "train.batch_sise=4"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "train.batch_sise");
  EXPECT_EQ(count_of(r.output, "llmprof: error:"), 1u) << r.output;
  EXPECT_EQ(r.output.find("[rank"), std::string::npos) << r.output;
}

TEST(CliNproc, OneRankRunsInThisProcessAsWithoutTheFlag) {
  ScratchDir dir;
  auto r = run_llmprof({"train", "--config", kTiny, "--nproc", "1", "--out", dir.path(), "--set",
                        "output.name=one", "--set", "schedule.max_steps=2", "--set",
                        "train.eval_interval=0", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir.file("one/summary.json"))) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("one/rank0"))) << r.output;
  EXPECT_EQ(r.output.find("[rank"), std::string::npos) << r.output;
}

// ---------------------------------------------------------------------------------------------
// Two ranks of the tiny model.

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Two ranks need two processes and loopback TCP; where the environment has them, a launch that
// fails is a failure of the test (its output shows why), never a skip.
#define SKIP_WITHOUT_TWO_PROCESSES()                                          \
  if (const std::string why = test::why_two_ranks_cannot_run(); !why.empty()) \
  GTEST_SKIP() << "this environment cannot run two ranks: " << why

// The pid of the launched rank `rank` among parent's children (their environment's RANK); -1.
pid_t rank_pid(pid_t parent, int rank) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &ppid) != 2) continue;
    if (ppid != parent) continue;
    std::ifstream env(e.path() / "environ", std::ios::binary);
    std::string var;
    while (std::getline(env, var, '\0')) {
      if (var == "RANK=" + std::to_string(rank)) return static_cast<pid_t>(std::stol(name));
    }
  }
  return -1;
}

// Waits until path has more than `lines` lines (a rank's steps.csv with rows), up to limit_s.
bool wait_for_rows(const std::string& path, size_t lines, double limit_s) {
  const auto t0 = Clock::now();
  while (seconds_since(t0) < limit_s) {
    const std::string text = test::read_file(path);
    if (static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) > lines) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The launcher's exit code once it ends within limit_s; else it and `also` are killed and -1.
int wait_within(pid_t launcher, double limit_s, std::vector<pid_t> also = {}) {
  const auto t0 = Clock::now();
  while (seconds_since(t0) < limit_s) {
    int status = 0;
    if (::waitpid(launcher, &status, WNOHANG) == launcher) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  also.push_back(launcher);
  for (pid_t p : also) ::kill(p, SIGKILL);
  ::waitpid(launcher, nullptr, 0);
  return -1;
}

std::vector<std::string> long_run(const ScratchDir& dir, const std::string& name) {
  return {"train",
          "--config",
          kTiny,
          "--nproc",
          "2",
          "--out",
          dir.path(),
          "--set",
          "output.name=" + name,
          "--set",
          "schedule.max_steps=100000",
          "--set",
          "train.eval_interval=0",
          "--set",
          "ddp.timeout_s=5"};
}

TEST(CliNproc, TwoRanksWriteOneRunWithADirectoryPerRank) {
  SKIP_WITHOUT_TWO_PROCESSES();
  ScratchDir dir;
  auto r = run_llmprof({"train", "--config", kTiny, "--nproc", "2", "--out", dir.path(), "--set",
                        "output.name=two", "--set", "schedule.max_steps=4", "--set",
                        "train.eval_interval=0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* rank : {"rank0", "rank1"}) {
    EXPECT_TRUE(fs::exists(dir.file(std::string("two/") + rank + "/summary.json"))) << rank;
  }
  const auto summary = nlohmann::json::parse(test::read_file(dir.file("two/summary.json")));
  EXPECT_EQ(summary["distributed"]["world_size"], 2);
  // Rank 1 is quiet: no progress line of its own, only rank 0's.
  EXPECT_EQ(r.output.find("[rank 1]"), std::string::npos) << r.output;
  EXPECT_EQ(count_of(r.output, "status:"), 1u) << r.output;
}

TEST(CliNproc, AKilledRankEndsTheRunWithinTheTimeoutNamingIt) {
  SKIP_WITHOUT_TWO_PROCESSES();
  ScratchDir dir;
  const std::string log = dir.file("launcher.log");
  const pid_t launcher = test::spawn_llmprof(long_run(dir, "killed"), log);
  ASSERT_TRUE(wait_for_rows(dir.file("killed/rank1/steps.csv"), 2, 120)) << test::read_file(log);
  const pid_t victim = rank_pid(launcher, 1);
  ASSERT_GT(victim, 0);
  const auto t0 = Clock::now();
  ::kill(victim, SIGKILL);
  const int code = wait_within(launcher, 60);
  const double took_s = seconds_since(t0);
  const std::string out = test::read_file(log);
  EXPECT_EQ(code, 1) << out;
  expect_contains(out, "rank 1 (pid " + std::to_string(victim) + ") was killed by signal 9");
  EXPECT_LT(took_s, 5 + 10 + 10) << out;  // ddp.timeout_s + the launcher's margin + slack
  EXPECT_TRUE(fs::exists(dir.file("killed/rank0/steps.csv")));  // finished rows survive
}

TEST(CliNproc, AStoppedRankEndsTheRunAndNothingIsLeftRunning) {
  SKIP_WITHOUT_TWO_PROCESSES();
  ScratchDir dir;
  const std::string log = dir.file("launcher.log");
  const pid_t launcher = test::spawn_llmprof(long_run(dir, "stopped"), log);
  ASSERT_TRUE(wait_for_rows(dir.file("stopped/rank1/steps.csv"), 2, 120)) << test::read_file(log);
  const pid_t victim = rank_pid(launcher, 1);
  const pid_t other = rank_pid(launcher, 0);
  ASSERT_GT(victim, 0);
  ::kill(victim, SIGSTOP);
  const int code = wait_within(launcher, 60, {victim, other});
  const std::string out = test::read_file(log);
  EXPECT_EQ(code, 1) << out;
  expect_contains(out, "rank 1 (pid " + std::to_string(victim) + ") was stopped by signal 19");
  // Killed once rank 0 had ended, not after the grace period.
  expect_contains(out, "killing rank 1 (pid " + std::to_string(victim) +
                           "): every other rank has ended and the rest are stopped");
  EXPECT_NE(::kill(victim, 0), 0);  // reaped: gone
  EXPECT_NE(::kill(other, 0), 0);
}

TEST(CliNproc, SigintStopsEveryRankAndExits130) {
  SKIP_WITHOUT_TWO_PROCESSES();
  ScratchDir dir;
  const std::string log = dir.file("launcher.log");
  const pid_t launcher = test::spawn_llmprof(long_run(dir, "int"), log);
  ASSERT_TRUE(wait_for_rows(dir.file("int/rank1/steps.csv"), 2, 120)) << test::read_file(log);
  const pid_t r0 = rank_pid(launcher, 0), r1 = rank_pid(launcher, 1);
  ::kill(launcher, SIGINT);
  const int code = wait_within(launcher, 60, {r0, r1});
  const std::string out = test::read_file(log);
  EXPECT_EQ(code, 130) << out;
  for (const char* rank : {"rank0", "rank1"}) {
    const auto s = nlohmann::json::parse(
        test::read_file(dir.file(std::string("int/") + rank + "/summary.json")), nullptr, false);
    EXPECT_EQ(s.value("status", ""), "interrupted") << rank << "\n" << out;
  }
}

}  // namespace
}  // namespace llmprof
