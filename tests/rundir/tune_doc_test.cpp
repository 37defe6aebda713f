// tune.json's typed document: write then read gives the same search back (what a resume reads),
// errors name the file and the field, docs/tune.md matches the struct.
#include "llmprof/rundir/tune_doc.h"

#include <gtest/gtest.h>

#include <string>

#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

TuneDoc a_search() {
  TuneDoc d;
  d.inputs = {"c.yaml",
              "model: {}\n",
              {"threads=1"},
              {"threads=1,2"},
              "tokens_per_s",
              "step_us_per_token",
              20,
              true,
              0.01,
              "cpu",
              1};
  d.budget_s = 600;
  d.knobs.push_back({"threads", {"threads=2"}, "kept", 0.5, "prior: ideal scaling over cores"});
  TuneCandidate c;
  c.id = 1;
  c.sets = {"threads=2"};
  c.numerics = "kept";
  c.predicted_ratio = 0.5;
  c.planned_peak_bytes = 1 << 20;
  c.planned_fits = true;
  c.outcome = "winner";
  c.repetitions = {{"baseline", 0, 30.0, 2.5, 4.0, "b.log"}, {"candidate", 0, 20.0, 2.5, 3.0, ""}};
  c.rounds = 1;
  c.ratio = 2.0 / 3.0;
  c.verdict = "inconclusive";
  c.loss_difference = 0;
  c.seconds = 7;
  d.candidates = {c};
  d.winner = 1;
  d.status = "finished";
  d.seconds_spent = 7;
  return d;
}

TEST(TuneDocFile, WriteThenReadGivesTheSameSearch) {
  const std::string text = tune_doc_text(a_search());
  const TuneDoc d = parse_tune_doc(text, "t/tune.json");
  EXPECT_EQ(d.schema_version, kTuneSchemaVersion);
  EXPECT_TRUE(d.inputs == a_search().inputs);
  ASSERT_EQ(d.candidates.size(), 1u);
  ASSERT_EQ(d.candidates[0].repetitions.size(), 2u);
  EXPECT_EQ(d.candidates[0].repetitions[1].arm, "candidate");
  EXPECT_DOUBLE_EQ(d.candidates[0].repetitions[0].figure, 30.0);
  EXPECT_FALSE(d.candidates[0].ci_low.has_value());
  EXPECT_EQ(d.winner, 1);
  EXPECT_EQ(tune_doc_text(d), text);
}

TEST(TuneDocFile, ErrorsNameTheFileAndTheField) {
  doc_test::expect_data_error(
      [] { parse_tune_doc("{\"schema_version\": 1, \"inputs\": {}}", "t.json"); },
      "t.json: candidates is missing");
  std::string text = tune_doc_text(a_search());
  text.replace(text.find("\"round\": 0"), 10, "\"round\": \"x\"");
  doc_test::expect_data_error([&] { parse_tune_doc(text, "t.json"); }, "t.json");
}

// docs/tune.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(TuneDocFile, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = tune_doc_fields_doc();
  doc_test::expect_committed_doc("tune.md", generated);
  for (const char* field : {"`candidates[].ci_low`", "`candidates[].planned_fits`", "`winner`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
