#include "llmprof/eval/bench.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/model/quantize.h"
#include "llmprof/output/csv.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::eval {
namespace {

using test::ScratchDir;

const std::string& kTiny = test::kTinyConfig;

// ---------------------------------------------------------------------------------------------
// latency_stats: numpy-style linear interpolation, position q * (n - 1) in the sorted list.

std::vector<double> range(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(LatencyStats, OneToTenInterpolatesBetweenOrderStatistics) {
  std::vector<double> v = range(10);
  std::reverse(v.begin(), v.end());  // input order must not matter
  const LatencyStats s = latency_stats(v);
  EXPECT_EQ(s.n, 10);
  EXPECT_DOUBLE_EQ(s.mean_ms, 5.5);
  EXPECT_DOUBLE_EQ(s.p50_ms, 5.5);     // pos 4.5: 5 + 0.5
  EXPECT_NEAR(s.p90_ms, 9.1, 1e-12);   // pos 8.1: 9 + 0.1
  EXPECT_NEAR(s.p95_ms, 9.55, 1e-12);  // pos 8.55
  EXPECT_NEAR(s.p99_ms, 9.91, 1e-12);  // pos 8.91
  EXPECT_DOUBLE_EQ(s.max_ms, 10.0);
}

TEST(LatencyStats, OneToHundred) {
  const LatencyStats s = latency_stats(range(100));
  EXPECT_EQ(s.n, 100);
  EXPECT_DOUBLE_EQ(s.mean_ms, 50.5);
  EXPECT_NEAR(s.p50_ms, 50.5, 1e-12);   // pos 49.5
  EXPECT_NEAR(s.p90_ms, 90.1, 1e-12);   // pos 89.1
  EXPECT_NEAR(s.p95_ms, 95.05, 1e-12);  // pos 94.05
  EXPECT_NEAR(s.p99_ms, 99.01, 1e-12);  // pos 98.01
  EXPECT_DOUBLE_EQ(s.max_ms, 100.0);
}

TEST(LatencyStats, SingleValueIsEveryPercentile) {
  const LatencyStats s = latency_stats({2.5});
  EXPECT_EQ(s.n, 1);
  for (double v : {s.mean_ms, s.p50_ms, s.p90_ms, s.p95_ms, s.p99_ms, s.max_ms}) {
    EXPECT_DOUBLE_EQ(v, 2.5);
  }
}

TEST(LatencyStats, EmptyIsAllZeroWithNZero) {
  const LatencyStats s = latency_stats({});
  EXPECT_EQ(s.n, 0);
  for (double v : {s.mean_ms, s.p50_ms, s.p90_ms, s.p95_ms, s.p99_ms, s.max_ms}) {
    EXPECT_EQ(v, 0.0);
  }
}

// ---------------------------------------------------------------------------------------------
// run_bench on the tiny decoder.

// The tiny gpt (2 layers, C=32, T=32) with a short bench: 3 timed forwards after 1 warm-up.
config::Config tiny_bench(const std::string& out_dir, const std::string& name) {
  config::Config cfg = config::load_config(
      kTiny, {"bench.variants=fp32,bf16,int8", "bench.batch_sizes=1,2", "bench.warmup_iters=1",
              "bench.iters=3", "bench.generate_tokens=4", "eval.max_batches=4"});
  cfg.output.dir = out_dir;
  cfg.output.name = name;
  return cfg;
}

BenchOptions quiet() {
  BenchOptions o;  // run_bench prints nothing; `llmprof bench` prints the table
  return o;
}

// Trains the tiny model its 20 steps once and saves the checkpoint: quality figures of a model
// that learned something, so int8 and fp32 losses are a real comparison.
const std::string& tiny_checkpoint() {
  static const ScratchDir dir("llmprof-bench-ckpt");  // removed at exit
  static const std::string run = [] {
    config::Config cfg = config::load_config(kTiny, {"train.save_checkpoint=true"});
    cfg.output.dir = dir.path();
    cfg.output.name = "trained";
    train::TrainOptions o;
    o.quiet = true;
    return train::run_training(cfg, o).run_dir;
  }();
  return run;
}

size_t col(const std::vector<std::string>& header, const std::string& name) {
  return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
}

TEST(RunBench, TinyGptWritesEveryVariantAndBatchWithOrderedPercentiles) {
  ScratchDir dir;
  BenchOptions opts = quiet();
  opts.checkpoint = tiny_checkpoint();
  const BenchResult r = run_bench(tiny_bench(dir.path(), "bench"), opts);
  for (const char* f : {"config.yaml", "bench.csv", "bench_quality.csv", "bench.json", "log.txt"}) {
    EXPECT_TRUE(fs::exists(r.run_dir + "/" + f)) << f;
  }
  const auto rows = output::parse_csv(test::read_file(r.run_dir + "/bench.csv"));
  ASSERT_EQ(rows.size(), 7u) << "header + 3 variants x 2 batch sizes";
  const std::vector<std::string> expected = {
      "variant", "batch",  "seq_len", "samples_per_s", "tokens_per_s", "p50_ms",   "p90_ms",
      "p95_ms",  "p99_ms", "max_ms",  "loss",          "perplexity",   "accuracy", "weight_bytes"};
  ASSERT_GE(rows[0].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(rows[0][i], expected[i]) << "column " << i;
  const auto& h = rows[0];

  std::map<std::string, double> loss, weight_bytes;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const std::string variant = row[col(h, "variant")];
    EXPECT_EQ(row[col(h, "batch")], i % 2 == 1 ? "1" : "2");
    EXPECT_EQ(row[col(h, "seq_len")], "32");
    const double p50 = std::stod(row[col(h, "p50_ms")]), p90 = std::stod(row[col(h, "p90_ms")]),
                 p95 = std::stod(row[col(h, "p95_ms")]), p99 = std::stod(row[col(h, "p99_ms")]),
                 max = std::stod(row[col(h, "max_ms")]);
    EXPECT_GT(p50, 0) << variant;
    EXPECT_LE(p50, p90) << variant;
    EXPECT_LE(p90, p95) << variant;
    EXPECT_LE(p95, p99) << variant;
    EXPECT_LE(p99, max) << variant;
    EXPECT_GT(std::stod(row[col(h, "samples_per_s")]), 0);
    EXPECT_EQ(row[col(h, "accuracy")], "") << "lm reports perplexity, accuracy is null";
    EXPECT_FALSE(row[col(h, "perplexity")].empty());
    EXPECT_EQ(row[col(h, "iters")], "3");
    EXPECT_FALSE(row[col(h, "ttft_ms")].empty()) << variant;
    EXPECT_GT(std::stod(row[col(h, "ttft_ms")]), 0);
    EXPECT_GT(std::stod(row[col(h, "per_token_p50_ms")]), 0);
    EXPECT_GT(std::stod(row[col(h, "generate_tokens_per_s")]), 0);
    loss[variant] = std::stod(row[col(h, "loss")]);
    weight_bytes[variant] = std::stod(row[col(h, "weight_bytes")]);
  }
  EXPECT_LT(weight_bytes["int8"], weight_bytes["fp32"]);
  EXPECT_EQ(weight_bytes["bf16"], weight_bytes["fp32"]) << "autocast keeps fp32 weights";
  // Tolerance: int8 weights (scale max|w|/127) and per-call int8 activations move the mean
  // cross-entropy of the 20-step model (~3.8 nats) by well under 0.05 nats (measured: ~1e-6);
  // bf16 (8 mantissa bits) likewise (measured: ~1e-4).
  EXPECT_LT(loss["fp32"], std::log(64.0) - 0.2) << "trained checkpoint loaded (ln V = 4.16)";
  EXPECT_NEAR(loss["int8"], loss["fp32"], 0.05) << "max diff " << loss["int8"] - loss["fp32"];
  EXPECT_NEAR(loss["bf16"], loss["fp32"], 0.05) << "max diff " << loss["bf16"] - loss["fp32"];

  const auto quality = output::parse_csv(test::read_file(r.run_dir + "/bench_quality.csv"));
  ASSERT_EQ(quality.size(), 4u) << "header + 3 variants x the validation set";
  EXPECT_EQ(quality[0][0], "variant");
  EXPECT_EQ(quality[1][1], "val");

  const auto doc = nlohmann::json::parse(test::read_file(r.run_dir + "/bench.json"));
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["task"], "lm");
  EXPECT_EQ(doc["rows"].size(), 6u);
  EXPECT_TRUE(doc["checkpoint"].is_string());
  // The tokenizer bench mapped the text with: the run's, as its checkpoint recorded it.
  const auto meta = nlohmann::json::parse(
      test::read_file(doc["checkpoint"].get<std::string>() + "/checkpoint.json"));
  EXPECT_EQ(doc["tokenizer"]["sha256"], meta["tokenizer"]["sha256"]) << doc["tokenizer"].dump();
  EXPECT_TRUE(doc["tokenizer"]["sha256"].is_string());
  EXPECT_EQ(doc["generation"]["prompt_tokens"], 16);  // block_size / 2
  EXPECT_NE(doc["notes"]["bf16"].get<std::string>().find("fp32"), std::string::npos);
  EXPECT_FALSE(doc["torch_version"].get<std::string>().empty());
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(r.rows[0].latency.n, 3);
}

TEST(RunBench, GenerationLongerThanTheContextIsAConfigErrorNamingTheKey) {
  ScratchDir dir;
  config::Config cfg = tiny_bench(dir.path(), "too_long");
  cfg.bench.generate_tokens = 20;  // 16 (block_size / 2) + 20 > 32
  try {
    run_bench(cfg, quiet());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "bench.generate_tokens");
    const std::string what = e.what();
    EXPECT_NE(what.find("bench.generate_tokens"), std::string::npos) << what;
    EXPECT_NE(what.find("36"), std::string::npos) << what;
    EXPECT_NE(what.find("32"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/too_long")) << "bad input leaves no result directory";
}

// fp16 is a CUDA variant (CPU matmuls have no fp16 path): on the CPU it is refused up front,
// naming the key, and nothing is written. (int8 is refused the same way on cuda.)
TEST(RunBench, Fp16OnTheCpuIsAConfigErrorNamingTheKey) {
  ScratchDir dir;
  config::Config cfg = tiny_bench(dir.path(), "fp16_cpu");
  cfg.bench.variants = "fp32,fp16";
  try {
    run_bench(cfg, quiet());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "bench.variants");
    EXPECT_NE(std::string(e.what()).find("fp16 needs device=cuda"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/fp16_cpu")) << "bad input leaves no result directory";
}

TEST(RunBench, UnsupportedQuantEngineIsAConfigErrorNamingTheKey) {
  const std::vector<config::QuantEngine> supported = model::quantized_engines();
  std::string missing;
  for (const char* e : {"fbgemm", "x86", "qnnpack", "onednn"}) {
    const config::QuantEngine engine = config::parse_enum<config::QuantEngine>(e);
    if (std::find(supported.begin(), supported.end(), engine) == supported.end()) missing = e;
  }
  if (missing.empty()) GTEST_SKIP() << "every int8 engine is supported by this LibTorch";
  ScratchDir dir;
  config::Config cfg = tiny_bench(dir.path(), "engine");
  cfg.bench.variants = "int8";
  cfg.bench.quant_engine = config::parse_enum<config::QuantEngine>(missing);
  try {
    run_bench(cfg, quiet());
    FAIL() << "expected ConfigError for engine " << missing;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "bench.quant_engine");
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// The encoder: a tiny DistilBERT masked-LM on a slice of WikiText-2.

TEST(RunBench, TinyDistilBertMlmHasNoGenerationAndNullAccuracy) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  ScratchDir dir;
  config::Config cfg = config::load_config(
      kTiny,
      {"model.type=distilbert", "model.n_layer=1", "model.n_head=2", "model.n_embd=32",
       "model.ffn_dim=64", "model.block_size=32", "train.task=mlm", "data.tokenizer=wordpiece",
       "data.vocab_path=" + test::shared_data("vocab/bert-base-uncased-vocab.txt"),
       "data.path=" + test::shared_data("wikitext-2/wiki.valid.tokens"), "data.format=text",
       "data.max_examples=300", "eval.max_batches=2", "bench.variants=fp32,int8",
       "bench.batch_sizes=2", "bench.warmup_iters=1", "bench.iters=2"});
  cfg.output.dir = dir.path();
  cfg.output.name = "mlm";
  const BenchResult r = run_bench(cfg, quiet());
  ASSERT_EQ(r.rows.size(), 2u);
  for (const BenchRow& row : r.rows) {
    EXPECT_EQ(row.seq_len, 32);
    EXPECT_GT(row.samples_per_s, 0);
    EXPECT_TRUE(row.loss.has_value());
    EXPECT_FALSE(row.accuracy.has_value()) << "mlm reports perplexity";
    EXPECT_FALSE(row.ttft_ms.has_value()) << "no generation for the encoder";
  }
  EXPECT_LT(r.rows[1].weight_bytes, r.rows[0].weight_bytes);
  // Untrained encoder: logits near zero, so int8 barely moves the loss (~ln V).
  ASSERT_TRUE(r.rows[0].loss && r.rows[1].loss);
  EXPECT_NEAR(*r.rows[1].loss, *r.rows[0].loss, 0.05);
  const auto doc = nlohmann::json::parse(test::read_file(r.run_dir + "/bench.json"));
  EXPECT_EQ(doc["task"], "mlm");
  EXPECT_TRUE(doc["generation"].is_null());
}

// ---------------------------------------------------------------------------------------------
// The command line.

TEST(BenchCli, RunsAndPrintsTheTable) {
  ScratchDir dir;
  auto r = test::run_llmprof({"bench", "--config", kTiny, "--out", dir.path(), "--set",
                              "bench.variants=fp32,int8", "--set", "bench.batch_sizes=1", "--set",
                              "bench.iters=2", "--set", "bench.warmup_iters=1", "--set",
                              "bench.generate_tokens=2", "--set", "eval.max_batches=1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| variant | batch |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| int8 | 1 |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ttft ms"), std::string::npos) << r.output;
}

// A Llama-family model (RoPE, RMSNorm, SwiGLU, grouped-query attention) through bench: every
// variant and batch has its row in the table and in bench.json, with a generation for a decoder.
TEST(BenchCli, LlamaModelWritesEveryVariantAndBatch) {
  ScratchDir dir;
  const std::string llama = std::string(LLMPROF_SOURCE_DIR) + "/configs/llama_tiny.yaml";
  auto r = test::run_llmprof({"bench",
                              "--config",
                              llama,
                              "--out",
                              dir.path(),
                              "--set",
                              "model.n_layer=1",
                              "--set",
                              "model.n_embd=32",
                              "--set",
                              "model.intermediate_size=64",
                              "--set",
                              "model.block_size=16",
                              "--set",
                              "data.generated_chars=20000",
                              "--set",
                              "bench.variants=fp32,int8",
                              "--set",
                              "bench.batch_sizes=1,2",
                              "--set",
                              "bench.iters=2",
                              "--set",
                              "bench.warmup_iters=1",
                              "--set",
                              "bench.generate_tokens=2",
                              "--set",
                              "eval.max_batches=1",
                              "--set",
                              "threads=1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* row : {"| fp32 | 1 |", "| fp32 | 2 |", "| int8 | 1 |", "| int8 | 2 |"}) {
    EXPECT_NE(r.output.find(row), std::string::npos) << row << "\n" << r.output;
  }
  std::string run;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    if (fs::exists(e.path() / "bench.json")) run = e.path().string();
  }
  ASSERT_FALSE(run.empty()) << r.output;
  const auto doc = nlohmann::json::parse(test::read_file(run + "/bench.json"));
  EXPECT_EQ(doc["task"], "lm") << doc.dump(1);
  EXPECT_FALSE(doc["generation"].is_null()) << doc.dump(1);
  const std::string config = test::read_file(run + "/config.yaml");
  EXPECT_NE(config.find("type: llama"), std::string::npos) << config;
}

TEST(BenchCli, UnknownVariantExitsTwoWithOneLine) {
  ScratchDir dir;
  auto r = test::run_llmprof(
      {"bench", "--config", kTiny, "--out", dir.path(), "--set", "bench.variants=int4"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bench.variants"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("int4"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "nothing written";
}

}  // namespace
}  // namespace llmprof::eval
