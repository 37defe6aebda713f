// `llmprof train --nproc N` as a user runs it: the refusals that come before any rank starts
// (exit 2, one line naming the value), and N = 1 running in this process as without the flag.
// Runs of 2 ranks, which need the data-parallel engine, are in tests/train's distributed tests.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>

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

}  // namespace
}  // namespace llmprof
