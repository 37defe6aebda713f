// Helpers shared by the test suites: the shared data directory, scratch directories and running
// the llmprof executable as a user would.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "llmprof/error.h"

namespace llmprof::test {

// ../shared/data beside the checkout; empty when absent (tests then GTEST_SKIP with a message).
std::string shared_data_dir();

// Full path of a file under shared/data, or empty when shared/data is absent.
std::string shared_data(const std::string& relative);

// An input a fuzz target found, kept in tests/fuzz/regressions/<target>/<name> (scripts/fuzz.sh
// replays them too).
std::string fuzz_regression(const std::string& target, const std::string& name);

// A fresh empty directory under the system temp dir, removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag = "llmprof");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Writes text to path (creating parent directories).
void write_file(const std::string& path, const std::string& text);

// Reads a whole file; empty string if missing.
std::string read_file(const std::string& path);

struct CommandResult {
  int exit_code = -1;  // the process's exit status; 128+N when killed by signal N
  std::string output;  // stdout and stderr together
};

// Runs the built llmprof executable with args (no shell), capturing output.
CommandResult run_llmprof(const std::vector<std::string>& args);

// Starts llmprof in the background with stdout+stderr to log_path; returns its pid.
int spawn_llmprof(const std::vector<std::string>& args, const std::string& log_path);

// Waits for a spawned pid; returns its exit status like CommandResult::exit_code.
int wait_llmprof(int pid);

// Path of the built llmprof executable.
std::string llmprof_binary();

// Why this environment cannot run two ranks as two processes talking over loopback TCP (a child
// process cannot be forked, or no socket can listen on 127.0.0.1), naming what failed; "" when
// it can. The tests of two ranks skip on this reason only: a launcher that fails where two
// processes can run is a failure, never a skip.
std::string why_two_ranks_cannot_run();

// The message of the DataError fn throws; fails the test (and gives "") when none is thrown.
template <typename Fn>
std::string data_error_of(Fn fn) {
  try {
    fn();
  } catch (const DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no DataError thrown";
  return {};
}

// configs/tiny_test.yaml: the smallest config that trains (milliseconds a step).
inline const std::string kTinyConfig = std::string(LLMPROF_SOURCE_DIR) + "/configs/tiny_test.yaml";

// A non-fatal failure, printing text, unless part is in it.
inline void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in:\n" << text;
}

}  // namespace llmprof::test

#define LLMPROF_SKIP_WITHOUT_SHARED_DATA()                                                    \
  do {                                                                                        \
    if (::llmprof::test::shared_data_dir().empty())                                           \
      GTEST_SKIP() << "../shared/data is absent beside the checkout: real-data test skipped"; \
  } while (0)
