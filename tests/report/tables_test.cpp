// Report tables on fixture runs, in the three formats.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/report/report.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

using test::expect_contains;

using test::report_fixture;

const Table& find_table(const Document& doc, const std::string& id) {
  for (const auto& t : doc.tables) {
    if (t.id == id) return t;
  }
  throw std::runtime_error("no table " + id);
}

Document report_of(std::vector<std::string> names) {
  ReportOptions opts;
  for (const auto& n : names) opts.inputs.push_back(report_fixture(n));
  return build_report(opts);
}

TEST(SummaryTable, OneRowPerRunWithHandCheckedFigures) {
  Document doc = report_of({"run_a", "run_incomplete"});
  const Table& t = find_table(doc, "summary");
  ASSERT_EQ(t.rows.size(), 2u);
  const auto& a = t.rows[0];
  EXPECT_EQ(a[0].text, "run_a");
  EXPECT_EQ(a[1].text, "completed");
  EXPECT_EQ(*a[2].value, 11);
  EXPECT_EQ(*a[3].value, 1);
  EXPECT_EQ(a[4].text, "10.00");
  EXPECT_EQ(a[5].text, "9.450");
  EXPECT_EQ(a[6].text, "10.55");
  EXPECT_EQ(a[7].text, "51200");
  EXPECT_EQ(a[8].text, "25.0%");
  EXPECT_EQ(a[10].text, "3.200");
  EXPECT_EQ(a[12].text, "1.00 GiB");
  EXPECT_FALSE(a[13].value.has_value());  // no energy measured
  EXPECT_EQ(t.rows[1][1].text, "incomplete");
  EXPECT_EQ(t.rows[1][4].text, "11.00");
}

TEST(PhaseTable, SharesOfTheMedianStepAndEvalOfWallTime) {
  Document doc = report_of({"run_a"});
  const Table& t = find_table(doc, "phases.run_a");
  // data, forward, backward, optimizer, unattributed, step, eval.
  ASSERT_EQ(t.rows.size(), 7u);
  EXPECT_EQ(t.rows[0][4].text, "20.0%");
  EXPECT_EQ(t.rows[2][1].text, "3.500");
  EXPECT_EQ(t.rows[4][0].text, "unattributed");
  EXPECT_NEAR(*t.rows[4][1].value, 10 - (2 + 3 + 3.5 + 1), 1e-9);
  EXPECT_EQ(t.rows[6][0].text, "eval");
  EXPECT_EQ(t.rows[6][4].text, "11.8%");  // 20 / 170
  EXPECT_EQ(t.rows[6][5].text, "wall");
}

// run_a's phase medians add up to 9.5 ms of its 10 ms step; 1 ms more forward in every step makes
// them 10.5 ms: the 0.5 ms beyond the step is overlap of the measurements, never -0.5 ms of time.
TEST(PhaseTable, PhasesBeyondTheStepShowOverlapNotNegativeTime) {
  test::ScratchDir dir("report_overlap");
  const std::string run = dir.file("run");
  std::filesystem::copy(report_fixture("run_a"), run);
  std::string out;
  std::istringstream in(test::read_file(run + "/steps.csv"));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string c; std::getline(row, c, ',');) cells.push_back(c);
    if (out.empty()) {
      ASSERT_EQ(cells.at(6), "forward_ms");
    } else {
      cells.at(6) = fmt::format("{}", std::stod(cells.at(6)) + 1);
    }
    out += fmt::format("{}\n", fmt::join(cells, ","));
  }
  test::write_file(run + "/steps.csv", out);
  ReportOptions opts;
  opts.inputs = {run};
  const Document doc = build_report(opts);
  const Table& t = find_table(doc, "phases.run");
  ASSERT_EQ(t.rows[4][0].text, "unattributed");
  EXPECT_EQ(*t.rows[4][1].value, 0);
  EXPECT_EQ(t.rows[4][4].text, "0.00%");
  expect_contains(
      t.notes.back(),
      "unattributed: 0; the phase medians add up to 0.5000 ms (5.00% of the step median) "
      "more than the step median");
  expect_contains(t.notes.back(), "overlap of the measurements, not time");
  // A remainder that is time keeps its row and gets no such note.
  const Document run_a = report_of({"run_a"});
  const Table& a = find_table(run_a, "phases.run_a");
  EXPECT_NEAR(*a.rows[4][1].value, 0.5, 1e-9);
  for (const auto& n : a.notes) EXPECT_EQ(n.find("overlap"), std::string::npos) << n;
}

TEST(ModuleTable, ScopesInCanonicalOrderSummedOverBlocks) {
  Document doc = report_of({"run_a"});
  const Table& t = find_table(doc, "modules.run_a");
  ASSERT_EQ(t.rows.size(), 18u);
  EXPECT_EQ(t.rows[0][0].text, "embedding");
  EXPECT_EQ(t.rows[5][0].text, "attn.core");
  EXPECT_NEAR(*t.rows[5][1].value, 0.4, 1e-9);        // fwd
  EXPECT_NEAR(*t.rows[5][3].value, 0.4, 1e-9);        // bwd
  EXPECT_NEAR(*t.rows[1][5].value, 2.8 / 2.4, 1e-9);  // block bwd/fwd
  EXPECT_EQ(t.rows[17][0].text, "loss");
}

TEST(OpsTable, KeepsTheTopFifteenBySelfTime) {
  Document doc = report_of({"run_a"});
  const Table& t = find_table(doc, "ops.run_a");
  ASSERT_EQ(t.rows.size(), 15u);  // of 17 in ops.csv
  EXPECT_EQ(t.rows[0][1].text, "aten::addmm");
  EXPECT_EQ(t.rows[14][1].text, "aten::_log_softmax");
  EXPECT_EQ(t.rows[0][11].text, "[[512, 32], [32, 96], [96]]");
}

TEST(MemoryTable, PeakPerPhaseAndShareOfHost) {
  Document doc = report_of({"run_a"});
  const Table& t = find_table(doc, "memory.run_a");
  EXPECT_EQ(t.rows[1][0].text, "backward");
  EXPECT_EQ(t.rows[1][1].text, "150.0 MiB");
  EXPECT_EQ(t.rows[1][2].text, "40.0 MiB");
  expect_contains(t.notes[0], "6.2% of host memory");
  EXPECT_EQ(find_table(doc, "activations.run_a").rows[2][1].text, "16.0 MiB");  // mlp, 2 blocks
}

TEST(RenderMarkdown, PrintsTablesFindingsAndFooter) {
  std::string md = render(report_of({"run_a"}), Format::kMarkdown);
  expect_contains(md, "# llmprof report");
  expect_contains(md, "## Summary");
  expect_contains(md, "| run_a ");
  expect_contains(md, "## Phases: run_a");
  expect_contains(md, "## Findings");
  expect_contains(md, "`--set data.num_workers=1`");
  expect_contains(md, "Findings thresholds");
  EXPECT_EQ(md.find("## Compare"), std::string::npos);
}

TEST(RenderJson, RowsAreObjectsWithRawNumbers) {
  auto j = nlohmann::json::parse(render(report_of({"run_a"}), Format::kJson));
  EXPECT_EQ(j["schema_version"], 1);
  const auto& summary = j["tables"][0];
  EXPECT_EQ(summary["id"], "summary");
  EXPECT_DOUBLE_EQ(summary["rows"][0]["step_ms_median"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(summary["rows"][0]["mfu"].get<double>(), 0.25);
  EXPECT_TRUE(summary["rows"][0]["energy_j"].is_null());
  EXPECT_EQ(j["findings"].size(), 3u);
  EXPECT_EQ(j["findings"][0]["rule"], "data_wait");
}

TEST(RenderCsv, LongFormatOneLinePerCell) {
  std::string csv = render(report_of({"run_a"}), Format::kCsv);
  auto rows = output::parse_csv(csv);
  ASSERT_GT(rows.size(), 10u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"table", "row", "column", "value"}));
  EXPECT_EQ(rows[5], (std::vector<std::string>{"summary", "0", "step_ms_median", "10"}));
  for (const auto& r : rows) EXPECT_EQ(r.size(), 4u);
  expect_contains(csv, "findings,0,rule,data_wait");
}

// run_a as a killed run on a full disk leaves it: steps.csv cut inside its last row, modules.csv
// empty, no summary.json.
std::string cut_run(const test::ScratchDir& dir) {
  std::filesystem::copy(report_fixture("run_a"), dir.file("cut"),
                        std::filesystem::copy_options::recursive);
  std::string steps = test::read_file(dir.file("cut/steps.csv"));
  test::write_file(dir.file("cut/steps.csv"), steps.substr(0, steps.size() - 40));
  test::write_file(dir.file("cut/modules.csv"), "");
  std::filesystem::remove(dir.file("cut/summary.json"));
  return dir.file("cut");
}

TEST(BuildReport, CutRunIsReportedIncompleteWithWarningsInEveryFormat) {
  test::ScratchDir dir;
  ReportOptions opts;
  opts.inputs = {cut_run(dir)};
  Document doc = build_report(opts);
  ASSERT_EQ(doc.warnings.size(), 2u);
  EXPECT_EQ(doc.warnings[0].run, "cut");
  expect_contains(doc.warnings[0].text(), dir.file("cut/steps.csv") + " line 12");
  expect_contains(doc.warnings[1].text(), dir.file("cut/modules.csv") + ": empty file");
  const Table& t = find_table(doc, "summary");
  EXPECT_EQ(*t.rows[0][2].value, 10);  // the 10 whole steps of 11
  expect_contains(t.rows[0][1].text, "incomplete");
  std::string md = render(doc, Format::kMarkdown);
  expect_contains(md, "## Warnings");
  expect_contains(md, "- cut: " + dir.file("cut/steps.csv") + " line 12");
  EXPECT_LT(md.find("## Warnings"), md.find("## Summary")) << "warnings come first";
  auto j = nlohmann::json::parse(render(doc, Format::kJson));
  ASSERT_EQ(j["warnings"].size(), 2u);
  EXPECT_EQ(j["warnings"][0]["run"], "cut");
  EXPECT_EQ(j["warnings"][0]["file"], dir.file("cut/steps.csv"));
  EXPECT_EQ(j["warnings"][0]["line"], 12);
  EXPECT_TRUE(j["warnings"][1]["line"].is_null());
  EXPECT_EQ(j["incomplete_runs"], std::vector<std::string>{"cut"});
  expect_contains(render(doc, Format::kCsv), "warnings,0,message,");
  EXPECT_TRUE(
      nlohmann::json::parse(render(report_of({"run_a"}), Format::kJson))["warnings"].empty());
}

TEST(BuildReport, NoInputIsAUsageError) {
  EXPECT_THROW(build_report(ReportOptions{}), UsageError);
  EXPECT_THROW(parse_format("xml"), UsageError);
}

TEST(BuildReport, CompareAddsSideBySideTablesAndMethodFooter) {
  ReportOptions opts;
  opts.compare = {report_fixture("run_a"), report_fixture("run_b")};
  std::string md = render(build_report(opts), Format::kMarkdown);
  expect_contains(md, "## Compare: phases and throughput");
  expect_contains(md, "| A: run_a");
  expect_contains(md, "sigma = (p90 - p10) / (2 x 1.645)");
  expect_contains(md, "3 x sqrt(se_A^2 + se_B^2)");
}

// The fixture run_a copied with summary.json saying profile_level, and the files removed.
std::string run_at_level(test::ScratchDir& dir,
                         const std::string& level,
                         const std::vector<std::string>& remove) {
  namespace fs = std::filesystem;
  const std::string run = dir.file("run");
  fs::copy(report_fixture("run_a"), run, fs::copy_options::recursive);
  for (const auto& f : remove) fs::remove(run + "/" + f);
  test::write_file(
      run + "/summary.json",
      R"({"schema_version": 1, "status": "completed", "profile_level": ")" + level + "\"}\n");
  return run;
}

// The phase table says which tables the run's profile level (summary.json) left out, rather
// than guessing it from which files exist.
TEST(PhaseTable, NamesTheTablesTheSummarysProfileLevelLeftOut) {
  test::ScratchDir dir("report_level");
  ReportOptions opts;
  opts.inputs = {run_at_level(dir, "phases", {"modules.csv", "ops.csv"})};
  const Document doc = build_report(opts);
  const Table& t = find_table(doc, "phases.run");
  EXPECT_EQ(t.notes.size(), 3u);
  expect_contains(t.notes.at(1),
                  "No module tables: recorded at profile.level=phases; modules.csv needs "
                  "profile.level=modules.");
  expect_contains(t.notes.at(2),
                  "No op tables: recorded at profile.level=phases; ops.csv needs "
                  "profile.level=ops.");
  EXPECT_THROW(find_table(doc, "modules.run"), std::runtime_error);
}

TEST(PhaseTable, SaysWhenAFileItsLevelRecordsHoldsNoRows) {
  test::ScratchDir dir("report_level_ops");
  ReportOptions opts;
  opts.inputs = {run_at_level(dir, "ops", {"ops.csv"})};
  const Document doc = build_report(opts);
  const Table& t = find_table(doc, "phases.run");
  ASSERT_EQ(t.notes.size(), 2u);
  expect_contains(t.notes[1], "No op tables: profile.level=ops, but ops.csv holds no rows.");
  // Without a level (the fixtures' summary.json predates it) nothing is guessed.
  const Document fixture = report_of({"run_incomplete"});
  EXPECT_EQ(find_table(fixture, "phases.run_incomplete").notes.size(), 1u);
}

}  // namespace
}  // namespace llmprof::report
