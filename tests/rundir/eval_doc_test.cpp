// eval.json's typed document: write then read, the release's file rewrites byte for byte with
// no unknown key, unknown keys survive a rewrite, errors name the file and the field, a rate
// written as null (nothing timed) stays null, docs/eval.md matches the struct.
#include "llmprof/rundir/eval_doc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

using doc_test::expect_data_error;

EvalDoc classify_doc() {
  EvalDoc d;
  d.task = config::TaskKind::kClassify;
  d.model = "distilbert L=1";
  d.parameters = 1017978;
  d.checkpoint_note = "untrained: initial weights";
  d.weights = "initial";
  d.weights_note = "figures computed through randomly initialised weights (initial): not ...";
  d.tokenizer = DocTokenizer{"wordpiece", 30522, std::nullopt};
  d.precision = config::Precision::kBf16;
  d.threads = 2;
  d.batch_size = 4;
  d.command_line = {"llmprof", "eval"};
  EvalSetFigures s;
  s.name = "val";
  s.source = "data/val.tsv";
  s.available_sequences = 10;
  s.batches = 2;
  s.sequences = s.targets = 8;
  s.loss = 0.6931471805599453;  // ln 2
  s.accuracy = 0.625;           // 5 of 8
  s.seconds = 0.5;
  s.samples_per_s = 16;  // 8 / 0.5
  s.tokens_per_s = 512;  // 8 x 32 / 0.5
  d.sets = {s};
  return d;
}

TEST(EvalDocFile, WriteThenReadGivesTheSameFigures) {
  const std::string text = eval_doc_text(classify_doc());
  const EvalDoc read = parse_eval_doc(text, "e/eval.json");
  EXPECT_EQ(read.schema_version, kEvalSchemaVersion);
  EXPECT_EQ(read.task, config::TaskKind::kClassify);
  EXPECT_EQ(read.precision, config::Precision::kBf16);
  EXPECT_FALSE(read.checkpoint.has_value());
  EXPECT_FALSE(read.tokenizer.sha256.has_value());
  ASSERT_EQ(read.sets.size(), 1u);
  EXPECT_EQ(read.sets[0].sampling, "the whole set, in order");  // "" is written so
  EXPECT_FALSE(read.sets[0].perplexity.has_value());
  EXPECT_EQ(read.sets[0].accuracy, std::optional<double>(0.625));
  EXPECT_EQ(read.sets[0].tokens_per_s, 512);
  EXPECT_TRUE(read.unknown.empty());
  EXPECT_EQ(eval_doc_text(read), text);
}

TEST(EvalDocFile, ReleaseFileRewritesByteIdenticalWithNoUnknownKey) {
  const std::string path = std::string(LLMPROF_SOURCE_DIR) +
                           "/tests/rundir/fixtures/release-2026-11-27/eval/eval.json";
  const std::string text = test::read_file(path);
  const EvalDoc d = parse_eval_doc(text, path);
  EXPECT_EQ(eval_doc_text(d), text);
  EXPECT_TRUE(d.unknown.empty()) << d.unknown.begin()->first;
  EXPECT_EQ(d.task, config::TaskKind::kMlm);
  EXPECT_EQ(d.sets.size(), 2u);
}

TEST(EvalDocFile, ARateWrittenAsNullStaysNull) {
  EvalDoc d = classify_doc();
  d.sets[0].seconds = 0;
  d.sets[0].samples_per_s = d.sets[0].tokens_per_s = NAN;  // nothing timed
  const std::string text = eval_doc_text(d);
  EXPECT_NE(text.find("\"samples_per_s\": null"), std::string::npos) << text;
  const EvalDoc read = parse_eval_doc(text, "n.json");
  EXPECT_TRUE(std::isnan(read.sets[0].samples_per_s));
  EXPECT_EQ(eval_doc_text(read), text);
}

TEST(EvalDocFile, UnknownKeysAreKeptWhenTheFileIsRewritten) {
  std::string text = eval_doc_text(classify_doc());
  text.replace(text.find("\n  \"threads\""), 0, "\n  \"seed\": 7,");
  text.replace(text.find("\"targets\""), 0, "\"f1\": 0.5,\n      ");
  const EvalDoc read = parse_eval_doc(text, "u.json");
  ASSERT_EQ(read.unknown.size(), 2u);
  EXPECT_EQ(read.unknown.at("/seed"), "7");
  EXPECT_EQ(read.unknown.at("/sets/0/f1"), "0.5");
  const std::string rewritten = eval_doc_text(read);
  EXPECT_NE(rewritten.find("\"f1\": 0.5"), std::string::npos);
  EXPECT_EQ(eval_doc_text(parse_eval_doc(rewritten, "u")), rewritten);
}

TEST(EvalDocFile, BadFilesAreErrorsNamingTheFileAndTheField) {
  expect_data_error([] { parse_eval_doc(R"({"schema_version": 2, "sets": []})", "a/eval.json"); },
                    "a/eval.json: schema_version 2 is newer than this llmprof reads (1)");
  expect_data_error([] { parse_eval_doc(R"({"schema_version": 1})", "b/eval.json"); },
                    "b/eval.json: sets is missing");
  expect_data_error(
      [] {
        parse_eval_doc(R"({"schema_version": 1, "sets": [{"loss": "low"}]})", "c/eval.json");
      },
      "c/eval.json: sets.0.loss is \"low\", not a number");
  expect_data_error(
      [] { parse_eval_doc(R"({"schema_version": 1, "task": "qa", "sets": []})", "d.json"); },
      "qa");
}

// docs/eval.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(EvalDocFile, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = eval_doc_fields_doc();
  doc_test::expect_committed_doc("eval.md", generated);
  for (const char* field : {"`sets[].perplexity`", "`tokenizer.sha256`", "`weights_note`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
