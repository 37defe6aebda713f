// llmprof check's JSON verdict as a typed document: write then read, unknown keys kept, errors
// name the file and the field, docs/check_json.md matches the struct. (check's conversion of its
// CheckResult is in tests/check/check_test.cpp.)
#include "llmprof/rundir/check_doc.h"

#include <gtest/gtest.h>

#include <string>

#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

CheckDoc ab_doc() {
  CheckDoc d;
  d.mode = "repetitions";
  d.baseline = "base/llmprof train -c a.yaml";
  d.candidate = "head/llmprof train -c a.yaml";
  d.rounds = 6;
  d.verdict = "regression";
  d.exit_code = 3;
  d.command = "llmprof check --ab ...";
  CheckGate timing{"step_ms", "max", "step_ms=+5%", "timing", "lower", "", 10.0, 15.0, 10.5, 1.5};
  timing.interval = CheckInterval{1.4, 1.6, 62.0 / 64};
  timing.outcome = "fail";
  timing.reason = "beyond";
  CheckGate loss{"loss@6", "within", "loss@6=0", "loss", "lower", "p001-a=1-r1", 3.0, 3.0};
  loss.outcome = "pass";
  d.gates = {timing, loss};
  return d;
}

TEST(CheckDocFile, WriteThenReadGivesTheSameFigures) {
  const CheckDoc d = parse_check_doc(check_doc_text(ab_doc()), "check.json");
  EXPECT_EQ(d.schema_version, kCheckSchemaVersion);
  EXPECT_EQ(d.rounds, 6);
  EXPECT_EQ(d.exit_code, 3);
  ASSERT_EQ(d.gates.size(), 2u);
  EXPECT_EQ(d.gates[0].ratio, 1.5);
  ASSERT_TRUE(d.gates[0].interval.has_value());
  EXPECT_DOUBLE_EQ(d.gates[0].interval->confidence, 0.96875);
  EXPECT_EQ(d.gates[0].point, "");
  EXPECT_FALSE(d.gates[1].interval.has_value());
  EXPECT_FALSE(d.gates[1].limit.has_value());
  EXPECT_EQ(d.gates[1].point, "p001-a=1-r1");
  EXPECT_EQ(check_doc_text(d), check_doc_text(ab_doc()));  // byte-identical rewrite
}

TEST(CheckDocFile, UnknownFieldsAreKeptAndErrorsNameTheField) {
  std::string text = check_doc_text(ab_doc());
  text.insert(1, "\"later\": {\"x\": 1},");
  EXPECT_NE(check_doc_text(parse_check_doc(text, "c.json")).find("\"later\""), std::string::npos);
  doc_test::expect_data_error(
      [] { parse_check_doc(R"({"schema_version": 1, "mode": "directories"})", "a.json"); },
      "a.json: verdict is missing");
  doc_test::expect_data_error(
      [] {
        parse_check_doc(R"({"schema_version": 1, "mode": "x", "verdict": "pass",
          "exit_code": 0, "gates": [{"figure": "step_ms", "bound": "max", "gate": "g"}]})",
                        "b.json");
      },
      "b.json: gates.0.outcome is missing");
}

// docs/check_json.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(CheckDocFile, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = check_doc_fields_doc();
  doc_test::expect_committed_doc("check_json.md", generated);
  for (const char* field : {"`gates[].interval.confidence`", "`exit_code`", "`rounds`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
