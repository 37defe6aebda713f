// tried.json's typed document: write then read, unknown keys kept (an entry's with the entry),
// errors name the file and the field, docs/tried.md matches the struct. (report's TriedSet
// conversion and merge are in tests/report/tried_test.cpp.)
#include "llmprof/rundir/tried_doc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

TriedDoc two_entries() {
  TriedEntry measured{"train.precision=bf16", {"roofline"}, "step_us_per_token", 20,
                      {2.0, 2.1},             {3.2, 3.0},   "",  "2026-11-27T10:00:00+0000",
                      "llmprof report --try run"};
  // 3.0 / 2.0 and 3.2 / 2.1: medians 2.05 and 3.1, ratio 3.1 / 2.05.
  measured.comparison = TriedComparison{"slower", 2, 2.05, 3.1, 3.1 / 2.05, 1.5119, 0.95,
                                        std::nullopt, std::nullopt};
  TriedEntry refused{"optim.fused=true", {"optimizer_share"}, "step_us_per_token", 20};
  refused.error = "refused";
  TriedDoc d;
  d.tried = {measured, refused};
  return d;
}

TEST(TriedDocFile, WriteThenReadGivesTheSameFigures) {
  const std::string text = tried_doc_text(two_entries());
  const TriedDoc d = parse_tried_doc(text, "run/tried.json");
  EXPECT_EQ(d.schema_version, kTriedSchemaVersion);
  ASSERT_EQ(d.tried.size(), 2u);
  EXPECT_EQ(d.tried[0].baseline, (std::vector<double>{2.0, 2.1}));
  ASSERT_TRUE(d.tried[0].comparison.has_value());
  EXPECT_EQ(d.tried[0].comparison->verdict, "slower");
  EXPECT_DOUBLE_EQ(d.tried[0].comparison->ratio_of_medians, 3.1 / 2.05);
  EXPECT_FALSE(d.tried[0].comparison->ci_low.has_value());  // 2 pairs: no interval
  EXPECT_FALSE(d.tried[1].comparison.has_value());
  EXPECT_EQ(d.tried[1].error, "refused");
  EXPECT_TRUE(d.unknown.empty());
  EXPECT_EQ(tried_doc_text(d), text);
}

TEST(TriedDocFile, UnknownKeysAreKeptWithTheirEntry) {
  std::string text = tried_doc_text(two_entries());
  text.replace(text.find("\n  \"tried\""), 0, "\n  \"host\": \"h\",");
  text.replace(text.find("\"set\": \"optim.fused=true\""), 0, "\"seed\": 7,\n      ");
  TriedDoc d = parse_tried_doc(text, "u.json");
  EXPECT_EQ(d.unknown.size(), 1u);
  EXPECT_EQ(d.unknown.at("/host"), "\"h\"");
  ASSERT_EQ(d.tried[1].unknown.size(), 1u);
  EXPECT_EQ(d.tried[1].unknown.at("/seed"), "7");
  std::swap(d.tried[0], d.tried[1]);  // the entry keeps its field wherever it goes
  const TriedDoc again = parse_tried_doc(tried_doc_text(d), "u2.json");
  EXPECT_EQ(again.tried[0].set, "optim.fused=true");
  EXPECT_EQ(again.tried[0].unknown.at("/seed"), "7");
  EXPECT_TRUE(again.tried[1].unknown.empty());
}

TEST(TriedDocFile, BadFilesAreErrorsNamingTheFileAndTheField) {
  doc_test::expect_data_error([] { parse_tried_doc(R"({"schema_version": 2, "tried": []})", "a.json"); },
                    "a.json: schema_version 2 is newer than this llmprof reads (1)");
  doc_test::expect_data_error([] { parse_tried_doc(R"({"tried": []})", "b.json"); },
                    "b.json: schema_version is missing");
  doc_test::expect_data_error(
      [] {
        parse_tried_doc(R"({"schema_version": 1, "tried": [{"set": "a=1", "rules": [],
          "figure": "median_step_ms", "steps": 2, "baseline": [], "candidate": [],
          "verdict": "faster", "pairs": 2}]})", "c.json");
      },
      "c.json: tried.0.baseline_median is missing");
  doc_test::expect_data_error(
      [] {
        parse_tried_doc(R"({"schema_version": 1, "tried": [{"set": "a=1", "rules": [],
          "figure": "median_step_ms", "steps": 2, "baseline": ["x"], "candidate": [],
          "verdict": null}]})", "d.json");
      },
      "d.json: tried.0.baseline is [\"x\"], not an array of numbers");
}

// docs/tried.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(TriedDocFile, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = tried_doc_fields_doc();
  doc_test::expect_committed_doc("tried.md", generated);
  for (const char* field : {"`tried[].ci_low`", "`tried[].verdict`", "`what`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
