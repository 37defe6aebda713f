// scripts/gpu/trim_trace.py, which cut the recorded NCCL fixture out of a run's trace: cutting the
// fixture's own step again gives the same document; bad input exits 2 naming the file or the step.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "llmprof/data/text_dataset.h"
#include "support/test_support.h"

namespace llmprof::test {
namespace {

const std::string kFixture =
    std::string(LLMPROF_SOURCE_DIR) + "/tests/gpu/fixtures/nccl_ws1_h200.trace.json.gz";

// Runs the script with `args`; its exit code and what it printed (stdout and stderr).
std::pair<int, std::string> trim(const std::string& args) {
  const std::string cmd = "python3 " + std::string(LLMPROF_SOURCE_DIR) +
                          "/scripts/gpu/trim_trace.py " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  char buf[512];
  while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(TrimTraceScript, CuttingTheFixturesStepAgainGivesTheSameDocument) {
  if (std::system("python3 -c pass > /dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  ScratchDir dir("llmprof_trim_trace");
  const auto [code, out] = trim(kFixture + " " + dir.file("t.json.gz") + " --step 7");
  ASSERT_EQ(code, 0) << out;
  expect_contains(out, "ProfilerStep#7, 3926 of 3926 events");
  EXPECT_EQ(data::read_file_maybe_gzip(dir.file("t.json.gz")), data::read_file_maybe_gzip(kFixture));
}

TEST(TrimTraceScript, BadInputExitsTwoNamingTheFileOrTheStep) {
  if (std::system("python3 -c pass > /dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  ScratchDir dir("llmprof_trim_trace_bad");
  const auto missing = trim(dir.file("none.json") + " " + dir.file("o.gz") + " --step 7");
  EXPECT_EQ(missing.first, 2) << missing.second;
  expect_contains(missing.second, "none.json: cannot read");
  const auto step = trim(kFixture + " " + dir.file("o.gz") + " --step 99");
  EXPECT_EQ(step.first, 2) << step.second;
  expect_contains(step.second, "no ProfilerStep#99 (recorded: ProfilerStep#7)");
  test::write_file(dir.file("plain.json"), "{\"a\": 1}");
  const auto plain = trim(dir.file("plain.json") + " " + dir.file("o.gz") + " --step 7");
  EXPECT_EQ(plain.first, 2) << plain.second;
  expect_contains(plain.second, "plain.json: not an llmprof trace");
}

}  // namespace
}  // namespace llmprof::test
