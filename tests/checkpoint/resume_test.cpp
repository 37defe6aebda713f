// train.resume_from (checkpoint/resume.h): the checks a checkpoint passes before a run goes on
// from it, each failure a ConfigError naming the key and what to do; the random state restored
// replays the same draws; fp16's loss scale travels beside the optimizer's state.
#include "llmprof/checkpoint/resume.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/train/task.h"
#include "support/test_support.h"

namespace llmprof::checkpoint {
namespace {

using test::ScratchDir;

config::Config tiny() {
  config::Config c =
      config::load_config(std::string(LLMPROF_SOURCE_DIR) + "/configs/tiny_test.yaml");
  c.schedule.max_steps = 10;
  return c;
}

// A checkpoint of tiny()'s model at dir/ckpt after `step` steps; with_state: optimizer.pt and
// rng-rank<k>.pt for ranks 0 .. ranks - 1 beside the weights, as a run's checkpoint interval
// writes them.
std::string save_tiny(const ScratchDir& dir, int64_t step, bool with_state, int ranks = 1) {
  const config::Config cfg = tiny();
  const auto task = train::make_task(cfg, 65, 0);
  auto opt = torch::optim::SGD(task->module().parameters(), torch::optim::SGDOptions(0.1));
  const std::string ckpt = dir.file("ckpt");
  save_checkpoint(ckpt, task->module(), cfg, config::TaskKind::kLm, step, nullptr,
                  [&](const std::string& tmp) {
                    if (!with_state) return;
                    save_optimizer_state(tmp, opt, nullptr);
                    for (int r = 0; r < ranks; ++r) {
                      test::write_file(rundir::path(tmp, rundir::rng_state_file(r)),
                                       rng_state_archive(torch::kCPU));
                    }
                  });
  return ckpt;
}

config::Config resuming(const std::string& ckpt) {
  config::Config c = tiny();
  c.train.resume_from = ckpt;
  return c;
}

// The message of check_resume's ConfigError, which must name train.resume_from; "" when it passes.
std::string resume_error(const config::Config& cfg, int world_size) {
  try {
    check_resume(cfg, world_size);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "train.resume_from") << e.what();
    return e.what();
  }
  return "";
}

TEST(CheckResume, ACheckpointWithItsStateResumesAfterItsStep) {
  ScratchDir dir;
  const std::string ckpt = save_tiny(dir, 3, true);
  const ResumePoint p = check_resume(resuming(ckpt), 1);
  EXPECT_EQ(p.dir, ckpt);
  EXPECT_EQ(p.step, 3);
}

TEST(CheckResume, WeightsAloneAreRefusedPointingAtInitFrom) {
  ScratchDir dir;
  const std::string what = resume_error(resuming(save_tiny(dir, 3, false)), 1);
  EXPECT_NE(what.find("holds weights only (use model.init_from"), std::string::npos) << what;
}

TEST(CheckResume, AnotherNumberOfRanksIsRefusedNamingTheNprocToUse) {
  ScratchDir dir;
  const std::string what = resume_error(resuming(save_tiny(dir, 3, true, 2)), 1);
  EXPECT_NE(what.find("holds the random state of 2 rank(s)"), std::string::npos) << what;
  EXPECT_NE(what.find("resume with --nproc 2"), std::string::npos) << what;
}

TEST(CheckResume, ACheckpointAtMaxStepsLeavesNothingToTrain) {
  ScratchDir dir;
  config::Config c = resuming(save_tiny(dir, 3, true));
  c.schedule.max_steps = 3;
  const std::string what = resume_error(c, 1);
  EXPECT_NE(what.find("nothing left to train; raise schedule.max_steps"), std::string::npos)
      << what;
}

TEST(CheckResume, AKeyThatShapesTrainingMustNotChangeButOutputMay) {
  ScratchDir dir;
  config::Config c = resuming(save_tiny(dir, 3, true));
  c.output.name = "elsewhere";  // free to change
  EXPECT_EQ(resume_error(c, 1), "");
  config::apply_override(c, "optim.lr=0.5");
  const std::string what = resume_error(c, 1);
  EXPECT_NE(what.find("optim.lr="), std::string::npos) << what;
  EXPECT_NE(what.find("(this run: 0.5)"), std::string::npos) << what;
}

TEST(RngState, TheRestoredStateReplaysTheSameDraws) {
  ScratchDir dir;
  test::write_file(rundir::path(dir.path(), rundir::rng_state_file(0)),
                   rng_state_archive(torch::kCPU));
  const torch::Tensor first = torch::rand({8});
  const config::Config cfg = tiny();
  const RngState state = read_rng_state({dir.path(), 1}, cfg, 0, torch::kCPU);
  ASSERT_EQ(state.states.size(), 1u);  // the CPU's generator alone
  apply_rng_state(state, torch::kCPU);
  EXPECT_TRUE(torch::equal(torch::rand({8}), first));
}

TEST(RngState, AMissingFileIsAConfigErrorNamingIt) {
  ScratchDir dir;
  try {
    read_rng_state({dir.path(), 1}, tiny(), 1, torch::kCPU);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "train.resume_from");
    EXPECT_NE(std::string(e.what()).find(rundir::rng_state_file(1)), std::string::npos) << e.what();
  }
}

// A loss scale as train's LossScaler saves it: one tensor under "loss_scale".
class FakeScale : public LossScaleState {
 public:
  explicit FakeScale(double v) : scale(torch::full({1}, v)) {}
  void save(torch::serialize::OutputArchive& a) const override { a.write("loss_scale", scale); }
  void load(torch::serialize::InputArchive& a) override { a.read("loss_scale", scale); }
  torch::Tensor scale;
};

TEST(OptimizerState, TheLossScaleTravelsBesideTheOptimizers) {
  ScratchDir dir;
  torch::Tensor w = torch::ones({2}, torch::requires_grad());
  torch::optim::SGD opt({w}, torch::optim::SGDOptions(0.1));
  FakeScale saved(1024.0);
  save_optimizer_state(dir.path(), opt, &saved);
  FakeScale loaded(1.0);
  load_optimizer_state({dir.path(), 1}, tiny(), opt, &loaded, torch::kCPU);
  EXPECT_EQ(loaded.scale.item<double>(), 1024.0);
  // A run that was not fp16 saved none: an fp16 run cannot resume from it.
  save_optimizer_state(dir.path(), opt, nullptr);
  try {
    load_optimizer_state({dir.path(), 1}, tiny(), opt, &loaded, torch::kCPU);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no loss scale (the run was not fp16)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace llmprof::checkpoint
