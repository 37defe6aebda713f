// bench.json's typed document: write then read, the release's file rewrites byte for byte with
// no unknown key (its context block included), unknown keys survive a rewrite, errors name the
// file and the field, docs/bench.md matches the struct.
#include "llmprof/rundir/bench_doc.h"

#include <gtest/gtest.h>

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

BenchDoc gpt_doc() {
  BenchDoc d;
  d.task = "lm";
  d.model = "gpt L=2";
  d.parameters = 1000;
  d.checkpoint = "runs/x/checkpoint";
  d.weights = "checkpoint";
  d.tokenizer = DocTokenizer{"char", 65, std::string(64, 'f')};
  d.threads = 1;
  d.variants = {config::BenchVariant::kFp32, config::BenchVariant::kInt8};
  d.batch_sizes = {1, 4};
  d.iters = 5;
  d.generation = GenerationFigures{8, 16, 4096, 4096, "fp32 cache"};
  d.notes = {{"fp32", "as stored"}, {"int8", "dynamic"}};
  d.context.threads = 1;
  d.context.device = config::DeviceKind::kCpu;
  BenchRow r;
  r.variant = config::BenchVariant::kInt8;
  r.batch = 4;
  r.seq_len = 32;
  r.latency = LatencyStats{5, 2.0, 1.5, 2.5, 2.75, 2.95, 3.0};
  r.samples_per_s = 2000;  // 4 / 2 ms
  r.loss = 2.5;
  r.ttft_ms = 0.75;
  d.rows = {r};
  QualityRow q;
  q.variant = config::BenchVariant::kInt8;
  q.dataset = "val";
  q.loss = 2.5;
  d.quality = {q};
  return d;
}

TEST(BenchDocFile, WriteThenReadGivesTheSameFigures) {
  const std::string text = bench_doc_text(gpt_doc());
  const BenchDoc read = parse_bench_doc(text, "b/bench.json");
  EXPECT_EQ(read.schema_version, kBenchSchemaVersion);
  EXPECT_EQ(read.variants, gpt_doc().variants);
  EXPECT_EQ(read.batch_sizes, (std::vector<int64_t>{1, 4}));
  ASSERT_TRUE(read.generation.has_value());
  EXPECT_EQ(read.generation->generate_tokens, 16);
  EXPECT_FALSE(read.generation_note.has_value());
  EXPECT_EQ(read.notes.at("int8"), "dynamic");
  EXPECT_EQ(read.context.threads, std::optional<int64_t>(1));
  ASSERT_EQ(read.rows.size(), 1u);
  EXPECT_EQ(read.rows[0].variant, config::BenchVariant::kInt8);
  EXPECT_EQ(read.rows[0].latency.p95_ms, 2.75);
  EXPECT_EQ(read.rows[0].ttft_ms, std::optional<double>(0.75));
  EXPECT_FALSE(read.rows[0].per_token_p50_ms.has_value());
  ASSERT_EQ(read.quality.size(), 1u);
  EXPECT_FALSE(read.quality[0].accuracy.has_value());
  EXPECT_TRUE(read.unknown.empty());
  EXPECT_EQ(bench_doc_text(read), text);
}

TEST(BenchDocFile, ReleaseFileRewritesByteIdenticalWithNoUnknownKey) {
  const std::string path = std::string(LLMPROF_SOURCE_DIR) +
                           "/tests/rundir/fixtures/release-2026-11-27/bench/bench.json";
  const std::string text = test::read_file(path);
  const BenchDoc d = parse_bench_doc(text, path);
  EXPECT_EQ(bench_doc_text(d), text);
  EXPECT_TRUE(d.unknown.empty()) << d.unknown.begin()->first;
  EXPECT_FALSE(d.context.peak_flops.has_value());
  EXPECT_TRUE(d.context.host.has_value());
  EXPECT_FALSE(d.generation.has_value());  // an encoder: a note instead
  EXPECT_TRUE(d.generation_note.has_value());
}

TEST(BenchDocFile, UnknownKeysAreKeptWhenTheFileIsRewritten) {
  std::string text = bench_doc_text(gpt_doc());
  text.replace(text.find("\n  \"threads\""), 0, "\n  \"seed\": 7,");
  text.replace(text.find("\"max_ms\""), 0, "\"p999_ms\": 3.5,\n        ");
  const BenchDoc read = parse_bench_doc(text, "u.json");
  ASSERT_EQ(read.unknown.size(), 2u);
  EXPECT_EQ(read.unknown.at("/seed"), "7");
  EXPECT_EQ(read.unknown.at("/rows/0/latency/p999_ms"), "3.5");
  const std::string rewritten = bench_doc_text(read);
  EXPECT_EQ(bench_doc_text(parse_bench_doc(rewritten, "u")), rewritten);
}

TEST(BenchDocFile, BadFilesAreErrorsNamingTheFileAndTheField) {
  expect_data_error([] { parse_bench_doc(R"({"schema_version": 2, "rows": []})", "a.json"); },
                    "a.json: schema_version 2 is newer than this llmprof reads (1)");
  expect_data_error([] { parse_bench_doc(R"({"schema_version": 1})", "b.json"); },
                    "b.json: rows is missing");
  expect_data_error(
      [] {
        parse_bench_doc(R"({"schema_version": 1, "rows": [{"variant": "fp32", "batch": "x"}]})",
                        "c.json");
      },
      "c.json: rows.0.batch is \"x\", not an integer");
  expect_data_error(
      [] { parse_bench_doc(R"({"schema_version": 1, "rows": [{"variant": "int4"}]})", "d.json"); },
      "int4");
  expect_data_error(
      [] { parse_bench_doc(R"({"schema_version": 1, "rows": [], "context": {"threads": 1.5}})",
                           "e.json"); },
      "e.json: context.threads is 1.5, not an integer");
}

// docs/bench.md is generated from the struct; LLMPROF_UPDATE_DOCS=1 rewrites it.
TEST(BenchDocFile, TheCommittedFieldListMatchesTheStruct) {
  const std::string generated = bench_doc_fields_doc();
  doc_test::expect_committed_doc("bench.md", generated);
  for (const char* field : {"`rows[].latency.p99_ms`", "`quality[].weights`", "`generation`"}) {
    EXPECT_NE(generated.find(field), std::string::npos) << field;
  }
}

}  // namespace
}  // namespace llmprof::rundir
