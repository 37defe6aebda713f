// Helpers shared by the typed documents' tests (summary, env, eval, bench): one definition, so
// the test files can share a unity batch.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::rundir::doc_test {

// The release fixtures: run directories written by the last release, read and rewritten.
inline std::string release_dir() {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/rundir/fixtures/release-2026-11-27";
}

// Every file called `name` under `dir`, in path order.
inline std::vector<std::string> files_named(const std::string& dir, std::string_view name) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename().string() == name) paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Runs fn, expects a DataError (exit 2) whose message holds `part`.
template <typename Fn>
void expect_data_error(Fn fn, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "no DataError thrown";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), 2);
  }
}

// docs/<name> is generated from a document's struct: the committed file must equal `generated`;
// LLMPROF_UPDATE_DOCS=1 rewrites it.
inline void expect_committed_doc(const std::string& name, const std::string& generated) {
  const std::string path = std::string(LLMPROF_SOURCE_DIR) + "/docs/" + name;
  if (std::getenv("LLMPROF_UPDATE_DOCS") != nullptr) test::write_file(path, generated);
  ASSERT_TRUE(std::filesystem::exists(path)) << "run with LLMPROF_UPDATE_DOCS=1 to write " << path;
  EXPECT_EQ(test::read_file(path), generated)
      << path << " is out of date: run tests/test_rundir with LLMPROF_UPDATE_DOCS=1";
}

}  // namespace llmprof::rundir::doc_test
