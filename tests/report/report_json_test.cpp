// The report's JSON through rundir::ReportDoc: the release fixture run reports byte for byte as
// the release's llmprof reported it, the report reads back into typed fields and rewrites
// byte-identical, and each kind of cell and tried --set reads back as the figure it was.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "llmprof/report/report.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/report_doc.h"
#include "report/fixture_paths.h"
#include "support/test_support.h"

namespace llmprof::report {
namespace {

namespace fs = std::filesystem;

// The release fixture run, named relative to the source tree as the fixture's report names it.
constexpr const char* kReleaseRun = "tests/rundir/fixtures/release-2026-11-27/run-ops";

// `llmprof report tests/rundir/fixtures/release-2026-11-27/run-ops --format json`, run in the
// source tree by the llmprof of commit e4f7f39 (before the report's JSON was a typed document).
std::string release_report() {
  return test::read_file(test::report_fixture("release-run-ops.report.json"));
}

// Runs fn with the source tree as the working directory.
template <typename Fn>
auto in_source_tree(Fn fn) {
  struct Restore {
    fs::path before = fs::current_path();
    ~Restore() { fs::current_path(before); }
  } restore;
  fs::current_path(LLMPROF_SOURCE_DIR);
  return fn();
}

TEST(ReportJson, ReleaseRunReportsByteForByteAsBeforeTheTypedDocument) {
  const std::string expected = release_report();
  ASSERT_FALSE(expected.empty());
  const std::string json = in_source_tree([] {
    ReportOptions o;
    o.inputs = {kReleaseRun};
    return render(build_report(o), Format::kJson);
  });
  EXPECT_EQ(json, expected);
}

TEST(ReportJson, ReleaseReportReadsBackIntoTypedFieldsAndRewritesByteIdentical) {
  const std::string text = release_report();
  const rundir::ReportDoc d = rundir::parse_report_doc(text, "release-run-ops.report.json");
  EXPECT_EQ(d.schema_version, rundir::kReportSchemaVersion);
  EXPECT_TRUE(d.unknown.empty()) << d.unknown.begin()->first;
  EXPECT_EQ(d.intro.at(0), std::string("Inputs: ") + kReleaseRun);
  ASSERT_FALSE(d.tables.empty());
  EXPECT_EQ(d.tables[0].source.value_or(""),
            std::string(kReleaseRun) + "/summary.json, " + kReleaseRun + "/steps.csv, " +
                kReleaseRun + "/eval.csv");
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(rundir::report_doc_text(d), text);
}

// One table with every kind of cell and a key twice, one finding with a measured and a refused
// --set: the JSON reads back as the figures the Document held.
TEST(ReportJson, CellsAndTriedSetsReadBackAsTheirFigures) {
  Document doc;
  doc.title = "t";
  Table t{"phases", "Phases", {{"phase", "Phase"}, {"median_ms", "Median"}, {"share", "Share"},
                               {"x", "X1"}, {"x", "X2"}}};
  t.rows.push_back({text_cell("forward"), ms_cell(1.5), percent_cell(std::nullopt),
                    text_cell("first"), number_cell(NAN)});
  doc.tables.push_back(t);
  Finding f{"roofline", "a", "title", 0.25, 0.05, "fraction of step"};
  TriedSet slower;
  slower.set = "train.precision=bf16";
  slower.figure = ab::Figure::kMedianStepMs;
  slower.steps = 20;
  ab::Comparison c;
  c.pairs = 3;
  c.ratio_of_medians = 1.625;
  c.interval = ab::Interval{1.5, 1.75};
  c.verdict = ab::Verdict::kSlower;
  slower.comparison = c;
  TriedSet refused;
  refused.set = "optim.fused=true";
  refused.error = "refused";
  f.tried = {slower, refused};
  doc.findings.push_back(f);

  const std::string text = render(doc, Format::kJson);
  const rundir::ReportDoc d = rundir::parse_report_doc(text, "r.json");
  ASSERT_EQ(d.tables.size(), 1u);
  ASSERT_EQ(d.tables[0].columns.size(), 5u);
  ASSERT_EQ(d.tables[0].rows.size(), 1u);
  const auto& row = d.tables[0].rows[0];
  EXPECT_EQ(row.size(), 4u);  // "x" twice is one key: the last column's cell
  EXPECT_EQ(row.at("phase").text, std::optional<std::string>("forward"));
  EXPECT_EQ(row.at("median_ms").number, std::optional<double>(1.5));
  EXPECT_FALSE(row.at("share").number || row.at("share").text);  // unknown: null
  EXPECT_FALSE(row.at("x").number || row.at("x").text);          // NaN: null
  EXPECT_FALSE(d.tables[0].source.has_value());
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.findings[0].measured, std::optional<double>(0.25));
  ASSERT_EQ(d.findings[0].tried.size(), 2u);
  const rundir::ReportTried& s = d.findings[0].tried[0];
  EXPECT_EQ(s.figure, "median_step_ms");
  EXPECT_EQ(s.verdict, std::optional<std::string>("slower"));
  EXPECT_EQ(s.repetitions, std::optional<int64_t>(3));
  EXPECT_EQ(s.ci_high, std::optional<double>(1.75));
  EXPECT_EQ(s.text, tried_text(slower));
  const rundir::ReportTried& r = d.findings[0].tried[1];
  EXPECT_FALSE(r.verdict || r.repetitions || r.ratio_of_medians || r.ci_low);
  ASSERT_NE(text.find("\"repetitions\""), std::string::npos);
  EXPECT_EQ(text.find("\"repetitions\""), text.rfind("\"repetitions\""));  // the measured one only
  EXPECT_EQ(rundir::report_doc_text(d), text);
}

}  // namespace
}  // namespace llmprof::report
