// train.resume_from, one rank (beside the two-rank case in ddp_train_test.cpp; torch-free, as the
// rest of this suite): a run of 10 steps that checkpoints at step 5, against a run that
// resumes from that checkpoint for steps 6..10, at dropout 0.1 (so the random state matters)
// and two accumulation steps (so the sample stream's offset is 5 x 2 micro-batches): the same
// loss per step. A missing folder, another model shape, and a checkpoint without the optimizer's
// state are exit-2 errors naming train.resume_from and the folder, before any run directory.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace llmprof::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> tiny_args(const std::string& out, const std::string& name,
                                   const std::vector<std::string>& sets) {
  std::vector<std::string> a{"train", "--config", kTinyConfig, "--quiet",
                             "--set", "output.dir=" + out, "--set", "output.name=" + name,
                             "--set", "model.dropout=0.1", "--set", "train.grad_accum_steps=2",
                             "--set", "schedule.max_steps=10", "--set", "train.eval_interval=5",
                             "--set", "energy.enabled=false", "--set", "data.num_workers=0"};
  for (const std::string& s : sets) {
    a.push_back("--set");
    a.push_back(s);
  }
  return a;
}

// step -> the value of column `name` of a steps.csv or eval.csv (eval: the split's rows).
std::map<int64_t, double> by_step(const std::string& path, const std::string& name,
                                  const std::string& split = "") {
  std::istringstream in(read_file(path));
  std::string line;
  std::vector<std::string> header;
  std::map<int64_t, double> out;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    if (header.empty()) {
      header = f;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    if (!split.empty() && row["split"] != split) continue;
    out[std::stoll(row.at("step"))] = std::stod(row.at(name));
  }
  return out;
}

// A 10-step run of tiny_test with checkpoints at 5 (and at the end); its directory.
std::string reference_run(const ScratchDir& dir) {
  const CommandResult r = run_llmprof(tiny_args(
      dir.path(), "ten", {"train.save_checkpoint=true", "train.checkpoint_interval=5"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return dir.file("ten");
}

TEST(TrainResume, FiveStepsThenFiveResumedMatchTenStepsAtDropout) {
  ScratchDir dir("resume_one");
  const std::string ten = reference_run(dir);
  const std::string ckpt = ten + "/checkpoint-step5";
  for (const char* f : {"model.pt", "optimizer.pt", "rng-rank0.pt", "checkpoint.json"}) {
    EXPECT_TRUE(fs::exists(ckpt + "/" + f)) << f;
  }
  EXPECT_FALSE(fs::exists(ckpt + "/rng-rank1.pt"));
  const CommandResult r = run_llmprof(tiny_args(
      dir.path(), "resumed", {"train.resume_from=" + ckpt, "train.save_checkpoint=true"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string resumed = dir.file("resumed");
  const std::map<int64_t, double> want = by_step(ten + "/steps.csv", "loss");
  const std::map<int64_t, double> got = by_step(resumed + "/steps.csv", "loss");
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got.begin()->first, 6);  // the resumed run's steps.csv starts at step 6
  double worst = 0;
  for (const auto& [step, loss] : got) {
    worst = std::max(worst, std::abs(loss - want.at(step)) / std::abs(want.at(step)));
  }
  EXPECT_LE(worst, 1e-6) << "largest relative loss difference " << worst;
  // Steps 6..10 see other samples and dropout masks than 1..5: the losses are not a repeat.
  EXPECT_NE(got.at(6), want.at(1));
  // The learning rate follows the step: the schedule's value at 6..10, not at 1..5.
  const std::map<int64_t, double> lr_want = by_step(ten + "/steps.csv", "lr");
  const std::map<int64_t, double> lr_got = by_step(resumed + "/steps.csv", "lr");
  for (const auto& [step, lr] : lr_got) EXPECT_DOUBLE_EQ(lr, lr_want.at(step)) << step;
  // The eval at step 10 (after the same weights) is the same.
  EXPECT_NEAR(by_step(resumed + "/eval.csv", "loss", "val").at(10),
              by_step(ten + "/eval.csv", "loss", "val").at(10), 1e-6);
  const auto s = nlohmann::json::parse(read_file(resumed + "/summary.json"), nullptr, false);
  EXPECT_EQ(s["resumed_from"]["step"], 5);
  EXPECT_EQ(s["steps"]["completed"], 5);
  // The resumed run's own final checkpoint is at step 10, and resumable in turn.
  const auto meta = nlohmann::json::parse(read_file(resumed + "/checkpoint/checkpoint.json"),
                                          nullptr, false);
  EXPECT_EQ(meta["step"], 10);
}

TEST(TrainResume, AMissingFolderIsAnErrorNamingTheKeyAndThePath) {
  ScratchDir dir("resume_missing");
  const std::string gone = dir.file("no-such-checkpoint");
  const CommandResult r = run_llmprof(tiny_args(dir.path(), "x", {"train.resume_from=" + gone}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_contains(r.output, "train.resume_from");
  expect_contains(r.output, gone);
  EXPECT_FALSE(fs::exists(dir.file("x"))) << "no run directory for a refused run";
}

TEST(TrainResume, ACheckpointOfAnotherModelOrWithoutOptimizerStateIsRefused) {
  ScratchDir dir("resume_mismatch");
  const CommandResult first = run_llmprof(tiny_args(
      dir.path(), "two", {"schedule.max_steps=2", "train.save_checkpoint=true"}));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string ckpt = dir.file("two") + "/checkpoint";
  const CommandResult wider = run_llmprof(
      tiny_args(dir.path(), "wider", {"train.resume_from=" + ckpt, "model.n_embd=64"}));
  EXPECT_EQ(wider.exit_code, 2) << wider.output;
  expect_contains(wider.output, "train.resume_from");
  expect_contains(wider.output, ckpt);
  expect_contains(wider.output, "model.n_embd=32 (this run: 64)");
  EXPECT_FALSE(fs::exists(dir.file("wider")));
  // A weights-only checkpoint (as an llmprof before resume wrote) is named as such.
  fs::remove(ckpt + "/optimizer.pt");
  const CommandResult bare =
      run_llmprof(tiny_args(dir.path(), "bare", {"train.resume_from=" + ckpt}));
  EXPECT_EQ(bare.exit_code, 2) << bare.output;
  expect_contains(bare.output, "optimizer.pt");
  expect_contains(bare.output, "model.init_from");
}

}  // namespace
}  // namespace llmprof::test
