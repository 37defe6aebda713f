// model.type=llama end to end: configs/llama_tiny.yaml trains (the loss falls), the module scopes
// of a Llama block are attributed forward and backward, the counted matmul FLOPs reconcile with the
// analytic model as GPT-2's do, and bad llama keys are config errors naming the key.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/train/task.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace llmprof::train {
namespace {

config::Config llama_tiny(const std::string& out, int64_t steps) {
  config::Config c =
      config::load_config(std::string(LLMPROF_SOURCE_DIR) + "/configs/llama_tiny.yaml");
  c.output.dir = out;
  c.output.name = "llama";
  c.model.n_layer = 2;
  c.model.block_size = 32;
  c.data.generated_chars = 50000;
  c.train.batch_size = 8;
  c.train.eval_interval = 0;
  c.schedule.warmup_steps = 5;
  c.schedule.max_steps = steps;
  c.profile.warmup_steps = 2;
  // A known MFU peak: llama_tiny.yaml has none, and measuring one (5 matmuls of 2048^2) costs
  // each run over a second; no test here looks at MFU.
  c.profile.peak_flops_per_s = 1e11;
  c.threads = 1;
  return c;
}

TrainResult run(const config::Config& c) {
  TrainOptions o;
  o.quiet = true;
  TrainResult r = run_training(c, o);
  EXPECT_EQ(config::name(r.status), "completed") << r.message;
  return r;
}

std::vector<double> losses(const std::string& run_dir) {
  auto rows = output::parse_csv(test::read_file(run_dir + "/steps.csv"));
  size_t col = 0;
  while (col < rows[0].size() && rows[0][col] != "loss") ++col;
  std::vector<double> out;
  for (size_t i = 1; i < rows.size(); ++i) out.push_back(std::stod(rows[i][col]));
  return out;
}

TEST(LlamaTrain, TinyConfigLossFalls) {
  test::ScratchDir dir;
  TrainResult r = run(llama_tiny(dir.path(), 60));
  std::vector<double> l = losses(r.run_dir);
  ASSERT_EQ(l.size(), 60u);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += l[static_cast<size_t>(i)] / 5;
  for (size_t i = l.size() - 5; i < l.size(); ++i) last += l[i] / 5;
  std::printf("[llama_tiny] loss %.3f (first 5 steps) -> %.3f (last 5)\n", first, last);
  EXPECT_LT(last, first - 0.5) << "first " << first << " last " << last;
  // The run's model line (log.txt) names the shape and GQA's savings against MHA.
  const std::string log = test::read_file(r.run_dir + "/log.txt");
  EXPECT_NE(log.find("llama L=2 H=4 KV=2"), std::string::npos) << log;
  EXPECT_NE(log.find("GQA: KV cache"), std::string::npos) << "the savings are named";
}

// The model line's KV cache is counted in the run's own precision, as summary.json's model.gqa
// and the report count it. llama_tiny: L=4, KV=2 of H=4 heads, hd=32: L*2*KV*hd elements.
TEST(LlamaTask, ModelLineCountsTheKvCacheInTheRunsPrecision) {
  config::Config c =
      config::load_config(std::string(LLMPROF_SOURCE_DIR) + "/configs/llama_tiny.yaml");
  ASSERT_EQ(config::name(c.train.precision), "fp32");
  const std::string fp32 = make_task(c, 65, 0)->describe();
  EXPECT_NE(fp32.find("GQA: KV cache 2048 B/token in fp32 vs 4096 for MHA (2.00x less)"),
            std::string::npos)
      << fp32;
  c.train.precision = config::Precision::kBf16;
  const std::string bf16 = make_task(c, 65, 0)->describe();
  EXPECT_NE(bf16.find("GQA: KV cache 1024 B/token in bf16 vs 2048 for MHA"), std::string::npos)
      << bf16;
}

TEST(LlamaTrain, OpsLevelAttributesScopesAndCountsMatmulFlopsLikeTheAnalyticModel) {
  test::ScratchDir dir;
  config::Config c = llama_tiny(dir.path(), 8);
  c.profile.level = config::ProfileLevel::kOps;
  c.profile.schedule_wait = 2;
  c.profile.schedule_warmup = 1;
  c.profile.schedule_active = 3;
  // A known memory roof: at profile.level=ops an unset one is measured (STREAM over 3 GiB of
  // arrays, seconds of memory traffic) and this test does not look at it.
  c.profile.peak_bytes_per_s = 1e10;
  TrainResult r = run(c);
  auto s = nlohmann::json::parse(test::read_file(r.run_dir + "/summary.json"));
  const double ratio = s["flops"]["counted_vs_analytic_ratio"].get<double>();
  std::printf("[llama ops] counted / analytic matmul FLOPs = %.4f\n", ratio);
  EXPECT_NEAR(ratio, 1.0, 0.05) << s["flops"].dump();
  std::set<std::pair<std::string, std::string>> seen;
  auto rows = output::parse_csv(test::read_file(r.run_dir + "/modules.csv"));
  size_t scope = 0, pass = 0;
  for (size_t j = 0; j < rows[0].size(); ++j) {
    if (rows[0][j] == "scope") scope = j;
    if (rows[0][j] == "pass") pass = j;
  }
  for (size_t i = 1; i < rows.size(); ++i) seen.insert({rows[i][scope], rows[i][pass]});
  for (const char* sc : {"attn.q", "attn.k", "attn.v", "attn.o", "attn.rope", "attn.core",
                         "mlp.gate", "mlp.up", "mlp.down", "norm", "lm_head"}) {
    EXPECT_TRUE(seen.count({sc, "forward"})) << sc << " forward";
    EXPECT_TRUE(seen.count({sc, "backward"})) << sc << " backward";
  }
}

TEST(LlamaConfig, BadLlamaKeysAreErrorsNamingTheKey) {
  const std::string path = std::string(LLMPROF_SOURCE_DIR) + "/configs/llama_tiny.yaml";
  auto error_of = [&](const std::vector<std::string>& sets) -> std::string {
    try {
      config::load_config(path, sets);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({"model.n_kv_head=3"}).find("model.n_kv_head: 3 does not divide model.n_head=4"),
            std::string::npos)
      << error_of({"model.n_kv_head=3"});
  EXPECT_NE(error_of({"model.sliding_window=32"}).find("model.sliding_window: 32 is smaller"),
            std::string::npos);
  EXPECT_NE(error_of({"model.rope_scaling.type=linear"}).find("linear"), std::string::npos);
  EXPECT_NE(error_of({"model.type=gpt"}).find("model.type: gpt has no grouped-query"),
            std::string::npos)
      << error_of({"model.type=gpt"});
  EXPECT_EQ(error_of({"model.rope_scaling.type=llama3", "model.rope_scaling.factor=32"}), "");
}

}  // namespace
}  // namespace llmprof::train
