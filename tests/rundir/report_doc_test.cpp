// The report JSON's typed document: unknown keys survive a rewrite, errors name the file and the
// field, docs/report_json.md matches the struct. (The release run's report, read and rewritten
// byte for byte, is in tests/report/report_json_test.cpp: report builds the document.)
#include "llmprof/rundir/report_doc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

ReportDoc small_report() {
  ReportDoc d;
  d.title = "llmprof report";
  d.warnings.push_back(InputWarning{"a", "a/steps.csv", 0, "cut short"});
  ReportTable t{"summary", "Summary", {{"run", "Run"}, {"step_ms", "Step (ms)"}}};
  t.rows.push_back({{"run", ReportCell{std::nullopt, "a"}}, {"step_ms", ReportCell{2.5, {}}}});
  d.tables.push_back(t);
  ReportFinding f;
  f.rule = "data_wait";
  f.measured = 0.25;
  d.findings.push_back(f);
  return d;
}

TEST(ReportDocFile, WriteThenReadGivesTheSameFigures) {
  const std::string text = report_doc_text(small_report());
  const ReportDoc d = parse_report_doc(text, "r.json");
  EXPECT_EQ(d.schema_version, kReportSchemaVersion);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].line, 0);  // written null
  EXPECT_NE(text.find("\"text\": \"a/steps.csv: cut short\""), std::string::npos) << text;
  ASSERT_EQ(d.tables.size(), 1u);
  EXPECT_EQ(d.tables[0].rows[0].at("step_ms").number, std::optional<double>(2.5));
  EXPECT_EQ(d.findings[0].measured, std::optional<double>(0.25));
  EXPECT_FALSE(d.findings[0].threshold.has_value());
  EXPECT_EQ(report_doc_text(d), text);
}

TEST(ReportDocFile, UnknownKeysAreKeptWhenTheFileIsRewritten) {
  std::string text = report_doc_text(small_report());
  text.replace(text.find("\n  \"title\""), 0, "\n  \"host\": \"h\",");
  text.replace(text.find("\"rule\""), 0, "\"weight\": 2,\n      ");
  const ReportDoc d = parse_report_doc(text, "u.json");
  ASSERT_EQ(d.unknown.size(), 2u);
  EXPECT_EQ(d.unknown.at("/host"), "\"h\"");
  EXPECT_EQ(d.unknown.at("/findings/0/weight"), "2");
  const std::string rewritten = report_doc_text(d);
  EXPECT_NE(rewritten.find("\"weight\": 2"), std::string::npos) << rewritten;
  EXPECT_EQ(report_doc_text(parse_report_doc(rewritten, "u")), rewritten);
}

TEST(ReportDocFile, BadFilesAreErrorsNamingTheFileAndTheField) {
  doc_test::expect_data_error(
      [] { parse_report_doc(R"({"schema_version": 2, "tables": [], "findings": []})", "a.json"); },
      "a.json: schema_version 2 is newer than this llmprof reads (1)");
  doc_test::expect_data_error([] { parse_report_doc(R"({"schema_version": 1, "findings": []})", "b.json"); },
                    "b.json: tables is missing");
  doc_test::expect_data_error(
      [] {
        parse_report_doc(
            R"({"schema_version": 1, "findings": [], "tables": [{"id": "s", "rows": [{"x": [1]}]}]})",
            "c.json");
      },
      "c.json: tables.0.rows.0.x is [1], not a string, a number or null");
  doc_test::expect_data_error(
      [] {
        parse_report_doc(R"({"schema_version": 1, "tables": [], "findings": [{"rule": "r",
                            "tried": [{"steps": "20"}]}]})", "d.json");
      },
      "d.json: findings.0.tried.0.steps is \"20\", not an integer");
}

// docs/report_json.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(ReportDocFile, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = report_doc_fields_doc();
  doc_test::expect_committed_doc("report_json.md", generated);
  for (const char* field : {"`tables[].rows[].<column key>`", "`findings[].tried[].ci_low`",
                            "`warnings[].line`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
