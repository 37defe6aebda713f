// scripts/hf/make_hf_fixtures.py as a user runs it: --help prints its usage and leaves the
// committed checkpoint fixtures (tests/checkpoint/fixtures/hf) untouched; --out DIR writes there,
// and what it writes is byte for byte what is committed (the script is deterministic). Skipped with
// a message where python3 (standard library only) is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof {
namespace {

const std::string kScript = std::string(LLMPROF_SOURCE_DIR) + "/scripts/hf/make_hf_fixtures.py";
const std::string kCommitted = std::string(LLMPROF_SOURCE_DIR) + "/tests/checkpoint/fixtures/hf";

struct Shell {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

Shell shell(const std::string& cmd) {
  Shell r;
  if (FILE* f = ::popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, f) != nullptr) r.output += buf;
    const int status = ::pclose(f);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return r;
}

// Why the script cannot run here ("" when it can): python3 and the modules it imports.
std::string python_missing() {
  const Shell r = shell("python3 -c 'import argparse, json, math, os, random, re, struct, sys'");
  return r.exit_code == 0 ? "" : "python3 with its standard library is not available: " + r.output;
}

// Each regular file under root (path relative to root) with its modification time.
std::map<std::string, fs::file_time_type> mtimes(const std::string& root) {
  std::map<std::string, fs::file_time_type> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), root).string()] = e.last_write_time();
  }
  return out;
}

TEST(MakeHfFixturesScript, HelpPrintsUsageAndRewritesNoCommittedFixture) {
  if (const std::string why = python_missing(); !why.empty()) GTEST_SKIP() << why;
  const auto before = mtimes(kCommitted);
  ASSERT_GE(before.size(), 10u) << kCommitted;  // two folders of weights, vocabularies, configs
  const Shell r = shell("python3 '" + kScript + "' --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("usage:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--out DIR"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("wrote "), std::string::npos) << r.output;
  EXPECT_EQ(mtimes(kCommitted), before) << "--help rewrote files under " << kCommitted;
  const Shell bad = shell("python3 '" + kScript + "' --no-such-flag");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("unrecognized arguments: --no-such-flag"), std::string::npos)
      << bad.output;
  EXPECT_EQ(mtimes(kCommitted), before) << "a bad flag rewrote files under " << kCommitted;
}

TEST(MakeHfFixturesScript, OutWritesThereTheBytesThatAreCommitted) {
  if (const std::string why = python_missing(); !why.empty()) GTEST_SKIP() << why;
  test::ScratchDir dir("llmprof-hf-fixtures");
  const std::string out = dir.file("new/hf");  // created by the script, parents included
  const auto before = mtimes(kCommitted);
  const Shell r = shell("python3 '" + kScript + "' --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + out + "/gpt2_tiny"), std::string::npos) << r.output;
  const auto written = mtimes(out);
  ASSERT_EQ(written.size(), before.size()) << r.output;
  for (const auto& [file, t] : before) {
    ASSERT_TRUE(written.count(file)) << file << " not written under " << out;
    EXPECT_EQ(test::read_file(out + "/" + file), test::read_file(kCommitted + "/" + file))
        << file << " differs from the committed one";
  }
  EXPECT_EQ(mtimes(kCommitted), before) << "--out also rewrote files under " << kCommitted;
  test::write_file(dir.file("a_file"), "x");
  const Shell not_dir = shell("python3 '" + kScript + "' --out '" + dir.file("a_file") + "'");
  EXPECT_EQ(not_dir.exit_code, 2) << not_dir.output;
  EXPECT_NE(not_dir.output.find("is not a folder"), std::string::npos) << not_dir.output;
}

}  // namespace
}  // namespace llmprof
