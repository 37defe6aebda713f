// Output folders written by the release before the run-directory documents were typed
// (tests/rundir/fixtures/release-2026-11-27, README there): today's readers take each of them
// without an error or a warning. Once each document has its typed reader and writer, a further
// test reads each fixture and writes it back byte for byte; that needs those writers, which
// this release does not have (summary.json is assembled in place by three concerns).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "llmprof/report/report.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

std::string release_fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/rundir/fixtures/release-2026-11-27/" + name;
}

// Every warning of a reader, one per line, for a failure message.
std::string warning_lines(const std::vector<InputWarning>& warnings) {
  std::string out;
  for (const InputWarning& w : warnings) out += w.text() + "\n";
  return out;
}

// A completed run: status, no warning, one steps.csv row per configured step, the evals the
// config's eval interval asks for.
void expect_complete_run(const Run& run) {
  EXPECT_EQ(run.status, config::RunStatus::kCompleted) << run.dir;
  EXPECT_FALSE(run.incomplete) << run.dir;
  EXPECT_TRUE(run.warnings.empty()) << warning_lines(run.warnings);
  const std::optional<double> max_steps = run.config_number("schedule.max_steps");
  const std::optional<double> interval = run.config_number("train.eval_interval");
  ASSERT_TRUE(max_steps && interval) << run.dir;
  EXPECT_EQ(static_cast<double>(run.steps.size()), *max_steps) << run.dir;
  // One train and one val row per eval; an eval at every interval and at the last step.
  const int64_t evals = static_cast<int64_t>(*max_steps) / static_cast<int64_t>(*interval);
  EXPECT_EQ(static_cast<int64_t>(run.evals.size()), 2 * evals) << run.dir;
  EXPECT_EQ(run.summary_max_steps, static_cast<int64_t>(*max_steps)) << run.dir;
}

TEST(ReleaseFixtures, TinyRunAtOpsReadsWithoutWarning) {
  const rundir::Run run = load_run(release_fixture("run-ops"));
  expect_complete_run(run);
  EXPECT_EQ(run.config.at("profile.level"), "ops");
  EXPECT_FALSE(run.modules.empty());
  EXPECT_FALSE(run.ops.empty());
  EXPECT_FALSE(run.memory.empty());
  EXPECT_FALSE(run.activations.empty());
}

TEST(ReleaseFixtures, MlmRunReadsWithoutWarning) {
  const rundir::Run run = load_run(release_fixture("run-mlm"));
  expect_complete_run(run);
  EXPECT_EQ(run.config.at("model.type"), "distilbert");
  EXPECT_EQ(run.config.at("train.task"), "mlm");
}

TEST(ReleaseFixtures, SweepReadsWithEveryPointCompleted) {
  const Sweep sweep = load_sweep(release_fixture("sweep"));
  EXPECT_TRUE(sweep.warnings.empty()) << warning_lines(sweep.warnings);
  EXPECT_EQ(sweep.status, config::SweepState::kFinished);
  ASSERT_EQ(sweep.keys.size(), 2u);  // a 2 x 2 grid
  ASSERT_EQ(sweep.points.size(), 4u);
  for (const SweepPoint& p : sweep.points) {
    EXPECT_EQ(p.status, config::RunStatus::kCompleted) << p.point_id;
    ASSERT_FALSE(p.run_dir.empty()) << p.point_id;
    expect_complete_run(load_run(p.run_dir));
  }
}

TEST(ReleaseFixtures, ReportBuildsFromTheRunsAndTheSweepWithoutWarning) {
  report::ReportOptions options;
  options.inputs = {release_fixture("run-ops"), release_fixture("run-mlm"),
                    release_fixture("sweep")};
  const report::Document doc = report::build_report(options);
  EXPECT_TRUE(doc.warnings.empty()) << warning_lines(doc.warnings);
  EXPECT_TRUE(doc.incomplete_runs.empty());
  EXPECT_FALSE(doc.tables.empty());
  // Markdown renders every table the report built.
  EXPECT_FALSE(report::render(doc, report::Format::kMarkdown).empty());
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

// The header and the number of data rows of a CSV file (no quoted newlines in these files).
std::pair<std::string, size_t> csv_shape(const std::string& path) {
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  size_t rows = 0;
  while (std::getline(in, line)) rows += line.empty() ? 0 : 1;
  return {header, rows};
}

// eval and bench folders have no reader in rundir yet (their typed documents come with the
// change): their JSON parses and agrees with their CSV rows.
TEST(ReleaseFixtures, EvalDocumentParsesAndAgreesWithItsTable) {
  const std::string dir = release_fixture("eval");
  const nlohmann::json doc = read_json(path(dir, kEvalJson));
  ASSERT_TRUE(doc.is_object()) << path(dir, kEvalJson) << " is not a JSON object";
  EXPECT_EQ(doc.value("schema_version", 0), 1);
  ASSERT_TRUE(doc.contains("sets") && doc["sets"].is_array());
  const auto [header, rows] = csv_shape(path(dir, kEvalSets));
  EXPECT_EQ(header.rfind("set,", 0), 0u) << header;
  EXPECT_EQ(rows, doc["sets"].size());
}

TEST(ReleaseFixtures, BenchDocumentParsesAndAgreesWithItsTables) {
  const std::string dir = release_fixture("bench");
  const nlohmann::json doc = read_json(path(dir, kBenchJson));
  ASSERT_TRUE(doc.is_object()) << path(dir, kBenchJson) << " is not a JSON object";
  EXPECT_EQ(doc.value("schema_version", 0), 1);
  const size_t variants = doc["variants"].size(), sizes = doc["batch_sizes"].size();
  EXPECT_EQ(doc["rows"].size(), variants * sizes);
  EXPECT_EQ(csv_shape(path(dir, kBench)).second, variants * sizes);
  EXPECT_EQ(csv_shape(path(dir, kBenchQuality)).second, doc["quality"].size());
}

}  // namespace
}  // namespace llmprof::rundir
