// The DistilBERT encoder through the train loop: masked-LM on WikiText-2, sentiment
// classification on IMDB, checkpoints and model.init_from, and the same module scopes as the GPT.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/encoder_data.h"
#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::train {
namespace {

using test::ScratchDir;

TrainOptions quiet() {
  TrainOptions o;
  o.quiet = true;
  return o;
}

// A tiny encoder on a slice of WikiText-2 valid: 2 layers, C=32, T=32.
config::Config tiny_mlm(const std::string& out_dir, const std::string& name) {
  config::Config c;
  c.model.type = config::ModelType::kDistilbert;
  c.model.n_layer = 2;
  c.model.n_head = 2;
  c.model.n_embd = 32;
  c.model.ffn_dim = 64;
  c.model.block_size = 32;
  c.model.dropout = 0.0;
  c.data.tokenizer = config::TokenizerKind::kWordpiece;
  c.data.vocab_path = test::shared_data("vocab/bert-base-uncased-vocab.txt");
  c.data.path = test::shared_data("wikitext-2/wiki.valid.tokens");
  c.data.max_examples = 300;
  c.train.task = config::TaskKind::kMlm;
  c.train.batch_size = 4;
  c.train.eval_interval = 5;
  c.train.eval_steps = 2;
  c.schedule.warmup_steps = 2;
  c.schedule.max_steps = 10;
  c.profile.warmup_steps = 2;
  c.profile.peak_flops_per_s = 1e11;
  c.energy.enabled = false;
  c.threads = 1;
  c.output.dir = out_dir;
  c.output.name = name;
  return c;
}

nlohmann::json summary_of(const TrainResult& r) {
  return nlohmann::json::parse(test::read_file(r.run_dir + "/summary.json"));
}

std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  return output::parse_csv(test::read_file(path));
}

TEST(EncoderTraining, MlmRunReportsPerplexityDataAndCheckpoint) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  ScratchDir dir;
  config::Config cfg = tiny_mlm(dir.path(), "mlm");
  cfg.train.save_checkpoint = true;
  TrainResult r = run_training(cfg, quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  ASSERT_TRUE(r.final_val_loss);
  EXPECT_LT(*r.final_val_loss, std::log(30522.0) + 1.0);  // no worse than ~uniform over the vocab
  const auto s = summary_of(r);
  EXPECT_EQ(s["loss"]["task"], "mlm");
  EXPECT_NEAR(s["loss"]["final_val_perplexity"].get<double>(), std::exp(*r.final_val_loss), 1e-6);
  EXPECT_TRUE(s["loss"]["final_val_accuracy"].is_null());
  EXPECT_EQ(s["data"]["train_file"]["records_used"], 300);
  EXPECT_EQ(s["data"]["mlm_predictions_per_sequence"],
            data::mlm_predictions_per_sequence(32, 0.15));
  EXPECT_GT(s["data"]["val_sequences"].get<int64_t>(), 0);
  const auto eval = csv_rows(r.run_dir + "/eval.csv");
  ASSERT_EQ(eval[0], (std::vector<std::string>{"step", "split", "loss", "perplexity", "accuracy",
                                               "eval_ms"}));
  EXPECT_EQ(eval.size(), 5u);  // header + (train, val) at steps 5 and 10
  EXPECT_EQ(eval[1][4], "");   // accuracy null for mlm
  for (const char* f : {"checkpoint/model.pt", "checkpoint/checkpoint.json",
                        "checkpoint/config.yaml", "tokenizer.json"}) {
    EXPECT_TRUE(fs::exists(r.run_dir + "/" + f)) << f;
  }
  auto meta = nlohmann::json::parse(test::read_file(r.run_dir + "/checkpoint/checkpoint.json"));
  EXPECT_EQ(meta["task"], "mlm");
  EXPECT_EQ(meta["step"], 10);
}

TEST(EncoderTraining, ModulesLevelTimesTheSameScopesAsTheDecoderAndReconcilesFlops) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  ScratchDir dir;
  config::Config cfg = tiny_mlm(dir.path(), "mlm-ops");
  cfg.profile.level = config::ProfileLevel::kOps;
  cfg.profile.schedule_wait = 2;
  cfg.profile.schedule_warmup = 1;
  cfg.profile.schedule_active = 2;
  // A known memory roof: at profile.level=ops an unset one is measured (STREAM over 3 GiB of
  // arrays, seconds of memory traffic) and this test does not look at it.
  cfg.profile.peak_bytes_per_s = 1e10;
  cfg.schedule.max_steps = 6;
  cfg.train.eval_interval = 0;
  TrainResult r = run_training(cfg, quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  const auto rows = csv_rows(r.run_dir + "/modules.csv");
  ASSERT_FALSE(rows.empty());
  const auto& header = rows[0];
  const size_t scope_col = std::find(header.begin(), header.end(), "scope") - header.begin();
  ASSERT_LT(scope_col, header.size());
  std::set<std::string> scopes;
  for (size_t i = 1; i < rows.size(); ++i) scopes.insert(rows[i][scope_col]);
  for (const char* sc : {"attn.qkv", "attn.core", "attn.proj", "mlp.up", "mlp.act", "mlp.down",
                         "embedding", "lm_head"}) {
    EXPECT_TRUE(scopes.count(sc)) << sc;
  }
  const auto s = summary_of(r);
  const auto& flops = s["flops"];
  ASSERT_TRUE(flops.contains("counted_vs_analytic_ratio")) << flops.dump();
  EXPECT_NEAR(flops["counted_vs_analytic_ratio"].get<double>(), 1.0, 0.02) << flops.dump();
}

// IMDB is sorted by label; data.max_examples takes a seeded subset with both labels.
config::Config tiny_sentiment(const std::string& out_dir, const std::string& name) {
  config::Config c = tiny_mlm(out_dir, name);
  c.train.task = config::TaskKind::kClassify;
  c.data.path = test::shared_data("sentiment/imdb_train.csv.gz");
  c.data.val_path = test::shared_data("sentiment/imdb_test.csv.gz");
  c.data.max_examples = 3000;
  c.data.val_max_examples = 400;
  c.data.label_column = "label";
  c.model.block_size = 64;
  c.train.batch_size = 32;
  c.optim.lr = 2e-3;
  c.optim.weight_decay = 0.01;
  c.schedule.warmup_steps = 10;
  c.schedule.max_steps = 120;
  c.schedule.min_lr = 2e-4;
  c.train.eval_interval = 120;
  c.train.eval_steps = 13;  // 416 >= the 400 val reviews
  return c;
}

TEST(EncoderTraining, SentimentClassificationBeatsChanceInAShortRun) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  ScratchDir dir;
  config::Config cfg = tiny_sentiment(dir.path(), "sentiment");
  cfg.threads = 2;
  TrainResult r = run_training(cfg, quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  const auto s = summary_of(r);
  const double acc = s["loss"]["final_val_accuracy"].get<double>();
  std::printf("val accuracy after %d steps: %.3f\n", 120, acc);
  EXPECT_GT(acc, 0.62);  // chance is 0.5 on the balanced subset
  EXPECT_GT(s["data"]["train_truncated"].get<int64_t>(), 0);
}

TEST(EncoderTraining, InitFromLoadsTheEncoderAndKeepsTheNewHeadAtInit) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  ScratchDir dir;
  config::Config mlm = tiny_mlm(dir.path(), "pre");
  mlm.train.save_checkpoint = true;
  mlm.schedule.max_steps = 3;
  mlm.train.eval_interval = 0;
  ASSERT_EQ(llmprof::config::name(run_training(mlm, quiet()).status), "completed");

  config::Config cls = tiny_sentiment(dir.path(), "fine");
  cls.model.block_size = 32;
  cls.data.max_examples = 64;
  cls.data.val_max_examples = 32;
  cls.schedule.max_steps = 2;
  cls.schedule.warmup_steps = 1;
  cls.train.eval_interval = 0;
  cls.model.init_from = dir.path() + "/pre";  // a run directory: its checkpoint/ is used
  TrainResult r = run_training(cls, quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  const auto init = summary_of(r)["init_from"];
  EXPECT_EQ(init["task"], "mlm");
  EXPECT_GT(init["loaded"].get<int>(), 10);
  std::set<std::string> missing(init["missing"].begin(), init["missing"].end());
  EXPECT_TRUE(missing.count("classifier.weight")) << init.dump();
  EXPECT_TRUE(missing.count("pre_classifier.weight")) << init.dump();
  EXPECT_FALSE(init["unexpected"].empty());  // the MLM head is not used

  cls.output.name = "wide";
  cls.model.n_embd = 48;  // the checkpoint is 32 wide
  try {
    run_training(cls, quiet());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "model.init_from");
    EXPECT_NE(std::string(e.what()).find("(30522, 32) in checkpoint"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/wide"));  // bad input leaves no run directory
}

TEST(EncoderTraining, DatasetWithNoUsableRowIsADataErrorNamingTheFile) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  ScratchDir dir;
  test::write_file(dir.file("bad.csv"), "label,text\nx,\"good movie\"\n7,\"bad label\"\n");
  config::Config cfg = tiny_sentiment(dir.path(), "bad");
  cfg.data.path = dir.file("bad.csv");
  cfg.data.val_path = "";
  cfg.data.max_examples = 0;
  try {
    run_training(cfg, quiet());
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("bad.csv")), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), 2);
  }
}

TEST(DeviceCheck, CudaOnThisCpuBuildIsAConfigErrorSayingWhy) {
  ScratchDir dir;
  config::Config cfg = tiny_mlm(dir.path(), "cuda");
  cfg.model.type = config::ModelType::kGpt;
  cfg.train.task = config::TaskKind::kLm;
  cfg.data = config::DataConfig{};
  cfg.model.ffn_dim = 0;
  cfg.device.kind = config::DeviceKind::kCuda;
  try {
    run_training(cfg, quiet());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "device");
    EXPECT_NE(std::string(e.what()).find("device: 'cuda'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CPU-only LibTorch"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/cuda"));
}

}  // namespace
}  // namespace llmprof::train
