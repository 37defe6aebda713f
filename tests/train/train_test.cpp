#include <gtest/gtest.h>
#include <torch/version.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::train {
namespace {

using test::ScratchDir;

// The tiny config the suite trains: 2 layers, C=32, T=32, on a small generated corpus.
config::Config tiny_config(const std::string& out_dir, const std::string& name) {
  config::Config cfg = config::load_config(std::string(LLMPROF_SOURCE_DIR) + "/configs/tiny_test.yaml");
  cfg.output.dir = out_dir;
  cfg.output.name = name;
  return cfg;
}

TrainOptions train_quiet() {
  TrainOptions o;
  o.quiet = true;
  return o;
}

std::vector<double> column(const std::string& csv_path, const std::string& name) {
  auto rows = output::parse_csv(test::read_file(csv_path));
  std::vector<double> out;
  if (rows.empty()) return out;
  size_t col = std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin();
  for (size_t i = 1; i < rows.size(); ++i) {
    out.push_back(rows[i][col].empty() ? NAN : std::stod(rows[i][col]));
  }
  return out;
}

TEST(RunTraining, WritesEveryRunFileWithOneRowPerStep) {
  ScratchDir dir;
  config::Config cfg = tiny_config(dir.path(), "run");
  TrainResult r = run_training(cfg, train_quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  for (const char* f : {"config.yaml", "env.json", "steps.csv", "eval.csv", "log.txt",
                        "summary.json", "vocab.json"}) {
    EXPECT_TRUE(fs::exists(r.run_dir + "/" + f)) << f;
  }
  EXPECT_EQ(column(r.run_dir + "/steps.csv", "step").size(), 20u);
  auto summary = nlohmann::json::parse(test::read_file(r.run_dir + "/summary.json"));
  EXPECT_EQ(summary["status"], "completed");
  EXPECT_EQ(summary["steps"]["measured"], 18);  // 20 - profile.warmup_steps 2
  EXPECT_EQ(summary["mfu"]["peak_source"], "configured");
  auto env = nlohmann::json::parse(test::read_file(r.run_dir + "/env.json"));
  EXPECT_EQ(env["threads"], 1);
  EXPECT_TRUE(env["blas"].contains("mapped_libraries"));
  // config.yaml is the resolved config: loading it gives the same run settings.
  config::Config again = config::load_config(r.run_dir + "/config.yaml");
  again.source_file = cfg.source_file;  // only the "resolved from" comment differs
  EXPECT_EQ(config::to_yaml(again), config::to_yaml(cfg));
}

TEST(RunTraining, StepNumbersCountFromOneInEveryFileAndTheLog) {
  ScratchDir dir;
  config::Config cfg = tiny_config(dir.path(), "steps");  // 20 steps, eval every 10
  TrainResult r = run_training(cfg, train_quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  std::vector<double> steps = column(r.run_dir + "/steps.csv", "step");
  ASSERT_EQ(steps.size(), 20u);
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i], static_cast<double>(i + 1));
  // eval.csv's step is the step the eval followed, as the log says it.
  std::vector<double> evals = column(r.run_dir + "/eval.csv", "step");
  EXPECT_EQ(evals, (std::vector<double>{10, 10, 20, 20}));
  const std::string log = test::read_file(r.run_dir + "/log.txt");
  EXPECT_NE(log.find("eval at step 10:"), std::string::npos) << log;
  EXPECT_NE(log.find("eval at step 20:"), std::string::npos) << log;
  EXPECT_EQ(log.find("eval at step 9:"), std::string::npos) << log;
  auto summary = nlohmann::json::parse(test::read_file(r.run_dir + "/summary.json"));
  EXPECT_EQ(summary["steps"]["completed"], 20);
  EXPECT_EQ(summary["loss"]["eval_step"], 20);
}

TEST(RunTraining, PhasesAddUpToTheStep) {
  ScratchDir dir;
  TrainResult r = run_training(tiny_config(dir.path(), "run"), train_quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed");
  auto step = column(r.run_dir + "/steps.csv", "step_ms");
  auto d = column(r.run_dir + "/steps.csv", "data_ms");
  auto f = column(r.run_dir + "/steps.csv", "forward_ms");
  auto b = column(r.run_dir + "/steps.csv", "backward_ms");
  auto o = column(r.run_dir + "/steps.csv", "optimizer_ms");
  std::vector<double> ratio;
  for (size_t i = 0; i < step.size(); ++i) {
    double sum = d[i] + f[i] + b[i] + o[i];
    EXPECT_LE(sum, step[i] + 1e-6) << "step " << i << ": phases cannot exceed the step";
    ratio.push_back(sum / step[i]);
  }
  // Between phases only loop bookkeeping runs; a busy machine may preempt us there on a few
  // steps, so the typical (median) step is what must reconcile.
  std::sort(ratio.begin(), ratio.end());
  EXPECT_GT(ratio[ratio.size() / 2], 0.8) << "median share of the step covered by phases";
}

TEST(RunTraining, ProfilingLevelAndWorkersDoNotChangeTheLossTrajectory) {
  ScratchDir dir;
  config::Config a = tiny_config(dir.path(), "phases");
  config::Config b = tiny_config(dir.path(), "off_workers0");
  b.profile.level = config::ProfileLevel::kOff;
  b.data.num_workers = 0;
  config::Config c = tiny_config(dir.path(), "workers3");
  c.data.num_workers = 3;
  auto la = column(run_training(a, train_quiet()).run_dir + "/steps.csv", "loss");
  auto lb = column(run_training(b, train_quiet()).run_dir + "/steps.csv", "loss");
  auto lc = column(run_training(c, train_quiet()).run_dir + "/steps.csv", "loss");
  ASSERT_EQ(la.size(), lb.size());
  ASSERT_EQ(la.size(), lc.size());
  for (size_t i = 0; i < la.size(); ++i) {
    EXPECT_DOUBLE_EQ(la[i], lb[i]) << "step " << i;
    EXPECT_DOUBLE_EQ(la[i], lc[i]) << "step " << i;
  }
  // At level off the phase columns are null (not measured), never 0.
  auto off_fwd = column(dir.path() + "/off_workers0/steps.csv", "forward_ms");
  for (double v : off_fwd) EXPECT_TRUE(std::isnan(v));
}

TEST(RunTraining, GradAccumulationCheckpointingAndBf16Run) {
  ScratchDir dir;
  config::Config cfg = tiny_config(dir.path(), "accum");
  cfg.train.grad_accum_steps = 2;
  cfg.train.activation_checkpointing = true;
  cfg.train.precision = config::Precision::kBf16;
  cfg.schedule.max_steps = 6;
  TrainResult r = run_training(cfg, train_quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  auto tokens = column(r.run_dir + "/steps.csv", "tokens");
  EXPECT_EQ(tokens[0], 2 * 4 * 32);
  EXPECT_TRUE(std::isfinite(r.final_train_loss));
}

// optim.fused where this LibTorch has no fused kernels for the device (1.13 has none; CPU needs
// 2.4) is a config error naming the key and the version, before any run directory exists; with
// them (LibTorch >= 2.4) the fused AdamW trains the same trajectory as the loop.
TEST(RunTraining, FusedAdamWIsRefusedWithTheReasonOrFollowsTheLoop) {
  ScratchDir dir("fused_adamw");
  config::Config cfg = tiny_config(dir.path(), "fused");
  cfg.schedule.max_steps = 4;
  cfg.optim.fused = true;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  const TrainResult fused = run_training(cfg, train_quiet());
  cfg.optim.fused = false;
  cfg.output.name = "loop";
  const TrainResult loop = run_training(cfg, train_quiet());
  EXPECT_NEAR(fused.final_train_loss, loop.final_train_loss, 1e-4);
#else
  try {
    run_training(cfg, train_quiet());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "optim.fused");
    EXPECT_NE(std::string(e.what()).find("has no fused Adam/AdamW kernels for cpu"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/fused"));
  cfg.optim.fused = true;
  cfg.optim.name = config::Optimizer::kSgd;
  try {
    run_training(cfg, train_quiet());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("applies to adam and adamw, not sgd"), std::string::npos);
  }
#endif
}

TEST(RunTraining, ExistingRunDirectoryIsNeverOverwritten) {
  ScratchDir dir;
  config::Config cfg = tiny_config(dir.path(), "same");
  cfg.schedule.max_steps = 2;
  run_training(cfg, train_quiet());
  std::string before = test::read_file(dir.path() + "/same/steps.csv");
  try {
    run_training(cfg, train_quiet());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
    EXPECT_EQ(e.key(), "output.name");
  }
  EXPECT_EQ(test::read_file(dir.path() + "/same/steps.csv"), before);
}

TEST(RunTraining, TinyShakespeareValLossFallsWellBelowLnVocab) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  ScratchDir dir;
  config::Config cfg = tiny_config(dir.path(), "shakespeare");
  cfg.data.path = test::shared_data("tinyshakespeare.txt");
  cfg.model.n_embd = 64;
  cfg.model.n_head = 4;
  cfg.model.block_size = 64;
  cfg.train.batch_size = 16;
  cfg.schedule.max_steps = 300;
  cfg.schedule.warmup_steps = 20;
  cfg.optim.lr = 3e-3;
  cfg.train.eval_interval = 300;
  cfg.train.eval_steps = 8;
  cfg.threads = 2;
  TrainResult r = run_training(cfg, train_quiet());
  ASSERT_EQ(llmprof::config::name(r.status), "completed") << r.message;
  ASSERT_TRUE(r.final_val_loss.has_value());
  EXPECT_LT(*r.final_val_loss, 2.6) << "ln(65) = " << std::log(65.0);
}

}  // namespace
}  // namespace llmprof::train
