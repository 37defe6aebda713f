// `llmprof report` and `llmprof plot` as a user runs them: output, exit codes, and one-line
// errors naming the malformed file and line. (Lives in test_plot, which depends on the binary.)
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace llmprof {
namespace {

using test::run_llmprof;
using test::expect_contains;
using test::ScratchDir;

std::string fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/report/fixtures/" + name;
}

// A run directory copied from a fixture, with one file replaced.
std::string broken_run(const ScratchDir& dir, const std::string& file, const std::string& text) {
  std::filesystem::copy(fixture("run_a"), dir.file("run"),
                        std::filesystem::copy_options::recursive);
  test::write_file(dir.file("run/" + file), text);
  return dir.file("run");
}

TEST(CliReport, PrintsMarkdownTablesAndFindings) {
  auto r = run_llmprof({"report", fixture("run_a"), fixture("run_incomplete")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "## Summary");
  expect_contains(r.output, "| run_incomplete | incomplete |");
  expect_contains(r.output, "## Top 15 ops by self time: run_a");
  expect_contains(r.output, "`--set data.num_workers=1`");
}

TEST(CliReport, AFileGivenForTheRunDirectorySaysToGiveTheDirectory) {
  auto r = run_llmprof({"report", fixture("run_a") + "/steps.csv"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "steps.csv' is a file; give the run or sweep directory (" +
                                fixture("run_a") + ")");
  EXPECT_EQ(r.output.find("no such directory"), std::string::npos) << r.output;
  auto missing = run_llmprof({"report", fixture("no_such_run")});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  expect_contains(missing.output, "no such directory");
}

TEST(CliReport, JsonAndCsvFormatsAndOutFile) {
  ScratchDir dir;
  auto r =
      run_llmprof({"report", fixture("sweep_2d"), "--format", "json", "--out", dir.file("r.json")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(test::read_file(dir.file("r.json")));
  EXPECT_EQ(j["tables"][0]["id"], "sweep.points");
  auto csv = run_llmprof({"report", fixture("run_a"), "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 0);
  expect_contains(csv.output, "table,row,column,value\n");
  auto bad = run_llmprof({"report", fixture("run_a"), "--format", "xml"});
  EXPECT_EQ(bad.exit_code, 2);
  expect_contains(bad.output, "xml");
}

TEST(CliReport, CompareFlagsTheForwardChange) {
  auto r = run_llmprof({"report", "--compare", fixture("run_a"), fixture("run_b")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "## Compare: phases and throughput");
  expect_contains(r.output, "| forward ms");
  expect_contains(r.output, "2.00x");
  expect_contains(r.output, "Significance (compare)");
}

TEST(CliReport, MalformedCsvExitsTwoNamingFileAndLine) {
  ScratchDir dir;
  std::string run = broken_run(
      dir, "eval.csv",
      "step,split,loss,perplexity,eval_ms\n5,val,3.7,40,10\n10,val\n10,train,3.6,37,10\n");
  auto r = run_llmprof({"report", run});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, run + "/eval.csv line 3");
  expect_contains(r.output, "2 fields, the header has 5");
}

// A killed run on a full disk: steps.csv ends inside a row (no newline), modules.csv is empty.
std::string cut_run(const ScratchDir& dir) {
  std::string steps = test::read_file(fixture("run_a") + "/steps.csv");
  std::string run = broken_run(dir, "steps.csv", steps.substr(0, steps.size() - 40));
  test::write_file(run + "/modules.csv", "");
  std::filesystem::remove(run + "/summary.json");
  return run;
}

TEST(CliReport, RunCutShortIsReportedIncompleteWithWarningsNamingFileAndLine) {
  ScratchDir dir;
  std::string run = cut_run(dir);
  auto r = run_llmprof({"report", run});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "warning: run: " + run + "/steps.csv line 12: 14 fields");
  expect_contains(r.output, "warning: run: " + run + "/modules.csv: empty file");
  expect_contains(r.output, "## Warnings");
  expect_contains(r.output, "## Phases: run");
  expect_contains(r.output, "| incomplete: 2 part(s) cut short");
  auto j = run_llmprof({"report", run, "--format", "json", "--out", dir.file("r.json")});
  EXPECT_EQ(j.exit_code, 0) << j.output;
  auto doc = nlohmann::json::parse(test::read_file(dir.file("r.json")));
  EXPECT_EQ(doc["incomplete_runs"][0], "run");
  EXPECT_EQ(doc["warnings"][0]["line"], 12);
}

TEST(CliPlot, RunCutShortDrawsTheChartsWithDataAndWarns) {
  ScratchDir dir;
  std::string run = cut_run(dir);
  auto r = run_llmprof({"plot", run, "--out", dir.file("plots")});
  if (r.output.find("not found on PATH") != std::string::npos) GTEST_SKIP() << "no gnuplot";
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "warning: run: " + run + "/steps.csv line 12");
  expect_contains(r.output, "warning: run: " + run + "/modules.csv: empty file");
  expect_contains(r.output, "wrote   " + dir.file("plots") + "/04_phases.png");
  expect_contains(r.output, "wrote   " + dir.file("plots") + "/11_memory_per_phase.png");
  expect_contains(r.output, "skipped 01_block_timing: no modules.csv");
}

TEST(CliReport, NonNumericFieldExitsTwoNamingFileAndLine) {
  ScratchDir dir;
  std::string run = broken_run(dir, "memory.csv",
                               "step,phase,peak_allocated_bytes,end_allocated_bytes,rss_bytes\n"
                               "1,forward,100,80,1000\n1,backward,lots,40,1000\n");
  auto r = run_llmprof({"report", run});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, run + "/memory.csv line 3");
  expect_contains(r.output, "'lots' is not a number");
}

TEST(CliReport, InvalidJsonExitsTwoNamingFileAndLine) {
  ScratchDir dir;
  std::string run = broken_run(dir, "env.json", "{\n  \"host\": {\n    \"cores\": 4,\n  }\n}\n");
  auto r = run_llmprof({"report", run});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, run + "/env.json line 4");
}

TEST(CliReport, MissingDirectoryExitsTwoNamingIt) {
  auto r = run_llmprof({"report", "/nonexistent/llmprof-run"});
  EXPECT_EQ(r.exit_code, 2);
  expect_contains(r.output, "/nonexistent/llmprof-run");
  auto none = run_llmprof({"report"});
  EXPECT_EQ(none.exit_code, 2);
}

TEST(CliPlot, WritesChartsAndSaysWhichWereSkipped) {
  if (run_llmprof({"plot", "--help"}).exit_code != 0) FAIL() << "no plot command";
  ScratchDir dir;
  auto r = run_llmprof({"plot", fixture("run_incomplete"), "--out", dir.path()});
  if (r.output.find("not found on PATH") != std::string::npos) GTEST_SKIP() << "no gnuplot";
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "wrote   " + dir.path() + "/04_phases.png");
  expect_contains(r.output, "skipped 01_block_timing: no modules.csv");
  expect_contains(r.output, "skipped 11_memory_per_phase: no memory.csv");
}

TEST(CliPlot, MissingGnuplotExitsOneAndMissingDirTwo) {
  ScratchDir dir;
  auto r = run_llmprof(
      {"plot", fixture("run_a"), "--out", dir.path(), "--gnuplot", "llmprof-no-such-gnuplot"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "llmprof-no-such-gnuplot");
  auto missing = run_llmprof({"plot", "/nonexistent/llmprof-run", "--out", dir.path()});
  EXPECT_EQ(missing.exit_code, 2);
  expect_contains(missing.output, "/nonexistent/llmprof-run");
}

}  // namespace
}  // namespace llmprof
