// A llama run's report names what grouped-query attention saves: summary.json's model.gqa carried
// into a table of the report, every figure hand-computed from configs/llama_tiny.yaml.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "support/test_support.h"

namespace llmprof {
namespace {

using test::expect_contains;
using test::run_llmprof;
using test::ScratchDir;

// The Markdown table row that starts with `start` (its cells padded) holds every one of cells.
void expect_row(const std::string& report, const std::string& start,
                const std::vector<std::string>& cells) {
  const size_t at = report.find(start);
  ASSERT_NE(at, std::string::npos) << "no row " << start << " in\n" << report;
  std::string row = report.substr(at, report.find('\n', at) - at);
  std::string squeezed;  // runs of spaces as one: "|   2.0 KiB |" -> "| 2.0 KiB |"
  for (const char ch : row) {
    if (ch != ' ' || squeezed.empty() || squeezed.back() != ' ') squeezed += ch;
  }
  for (const auto& c : cells) expect_contains(squeezed, c);
}

const std::string kLlamaTiny = std::string(LLMPROF_SOURCE_DIR) + "/configs/llama_tiny.yaml";

TEST(GqaReport, LlamaTinyRunShowsKvBytesAndAttentionFlopsAgainstMha) {
  ScratchDir dir("gqa-report");
  auto r = run_llmprof({"train", "--config", kLlamaTiny, "--quiet", "--set",
                        "schedule.max_steps=2", "--set", "train.eval_interval=0", "--set",
                        "train.batch_size=2", "--set", "profile.warmup_steps=0", "--set",
                        "output.dir=" + dir.path(), "--set", "output.name=llama",
                        // a known MFU peak: llama_tiny.yaml has none and a measured one costs
                        // the run seconds; the test reads no MFU
                        "--set", "profile.peak_flops_per_s=1e11"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string run = dir.file("llama");
  const auto summary = nlohmann::json::parse(test::read_file(run + "/summary.json"));
  const nlohmann::json& g = summary.at("model").at("gqa");
  // llama_tiny: L=4 layers, H=4 query heads, KV=2 key/value heads, C=128, hd=C/H=32, T=64, fp32.
  // KV cache per token: L * 2 (k and v) * heads * hd * 4 bytes.
  EXPECT_EQ(g.at("kv_cache_bytes_per_token").get<int64_t>(), 4 * 2 * 2 * 32 * 4);   // 2048
  EXPECT_EQ(g.at("mha_kv_cache_bytes_per_token").get<int64_t>(), 4 * 2 * 4 * 32 * 4);  // 4096
  // Attention forward FLOPs per token and layer: q 2*C*H*hd = 32768, k and v 2*C*KV*hd = 16384
  // each (MHA: 32768), scores and mix 2*T*H*hd = 16384 each, o 2*H*hd*C = 32768.
  // GQA: 131072 per layer, 524288 in 4; MHA: 163840 per layer, 655360 in 4.
  EXPECT_DOUBLE_EQ(g.at("attention_flops_per_token").get<double>(), 524288.0);
  EXPECT_DOUBLE_EQ(g.at("mha_attention_flops_per_token").get<double>(), 655360.0);
  // k/v projections: 4 layers * 2 * 16384 = 131072; MHA 262144.
  EXPECT_DOUBLE_EQ(g.at("kv_projection_flops_per_token").get<double>(), 131072.0);
  EXPECT_DOUBLE_EQ(g.at("mha_kv_projection_flops_per_token").get<double>(), 262144.0);

  r = run_llmprof({"report", run});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "Grouped-query attention against multi-head attention: llama");
  expect_contains(r.output, "this model (2 kv heads)");
  expect_contains(r.output, "MHA, same width (4 kv heads)");
  // 2048 B vs 4096 B per token, 2.00x; 128 KiB vs 256 KiB per 64-token sequence.
  expect_row(r.output, "| KV cache per token ", {"| 2.0 KiB |", "| 4.0 KiB |", "| 2.00x |"});
  expect_row(r.output, "| KV cache per sequence (64 tokens) ",
             {"| 128.0 KiB |", "| 256.0 KiB |", "| 2.00x |"});
  // 655360 / 524288 = 1.25x; 262144 / 131072 = 2x.
  expect_row(r.output, "| attention forward FLOPs per token ",
             {"| 524288 |", "| 655360 |", "| 1.25x |"});
  expect_row(r.output, "| k/v projection forward FLOPs per token ",
             {"| 131072 |", "| 262144 |", "| 2.00x |"});
}

TEST(GqaReport, GptRunHasNoGqaSection) {
  ScratchDir dir("gqa-report");
  auto r = run_llmprof({"train", "--config", test::kTinyConfig, "--quiet", "--set",
                        "schedule.max_steps=2", "--set", "train.eval_interval=0", "--set",
                        "output.dir=" + dir.path(), "--set", "output.name=gpt"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto summary = nlohmann::json::parse(test::read_file(dir.file("gpt") + "/summary.json"));
  EXPECT_FALSE(summary.contains("model"));
  r = run_llmprof({"report", dir.file("gpt")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("Grouped-query attention"), std::string::npos);
}

}  // namespace
}  // namespace llmprof
