// Helpers shared by the typed documents' tests (summary, env, eval, bench): one definition, so
// the test files can share a unity batch.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "llmprof/error.h"

namespace llmprof::rundir::doc_test {

// The release fixtures: run directories written by the last release, read and rewritten.
inline std::string release_dir() {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/rundir/fixtures/release-2026-11-27";
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

}  // namespace llmprof::rundir::doc_test
