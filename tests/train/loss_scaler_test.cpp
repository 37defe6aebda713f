// The dynamic loss scaler's rule on the CPU path (loss_scaler.cpp), which mirrors the fused CUDA
// ops: unscaling, skipping non-finite steps, backing off and growing the scale.
#include "loss_scaler.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

namespace llmprof::train {
namespace {

torch::Tensor param_with_grad(std::vector<float> grad) {
  torch::Tensor p = torch::zeros({static_cast<int64_t>(grad.size())}, torch::requires_grad());
  p.mutable_grad() = torch::tensor(grad);
  return p;
}

TEST(LossScaler, ScalesTheLossAndUnscalesGradientsExactly) {
  LossScaler scaler(torch::kCPU, {1024.0, 2.0, 0.5, 3});
  EXPECT_EQ(scaler.scale(torch::tensor(0.75f)).item<float>(), 768.0f);
  std::vector<torch::Tensor> params = {param_with_grad({1024.0f, -2048.0f}),
                                       param_with_grad({512.0f}),
                                       torch::zeros({2}, torch::requires_grad())};  // no grad
  scaler.unscale(params);
  EXPECT_TRUE(scaler.gradients_finite());
  EXPECT_EQ(params[0].grad()[0].item<float>(), 1.0f);
  EXPECT_EQ(params[0].grad()[1].item<float>(), -2.0f);
  EXPECT_EQ(params[1].grad()[0].item<float>(), 0.5f);
  EXPECT_FALSE(params[2].grad().defined());
}

TEST(LossScaler, SkipsAndBacksOffOnANonFiniteGradient) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    LossScaler scaler(torch::kCPU, {1024.0, 2.0, 0.5, 3});
    std::vector<torch::Tensor> params = {param_with_grad({1.0f}), param_with_grad({bad, 2.0f})};
    scaler.unscale(params);
    EXPECT_FALSE(scaler.gradients_finite()) << bad;
    scaler.update();
    EXPECT_EQ(scaler.current_scale(), 512.0);
    // The flag is cleared for the next step.
    std::vector<torch::Tensor> fine = {param_with_grad({4.0f})};
    scaler.unscale(fine);
    EXPECT_TRUE(scaler.gradients_finite());
  }
}

TEST(LossScaler, GrowsAfterGrowthIntervalFiniteStepsInARow) {
  LossScaler scaler(torch::kCPU, {1024.0, 2.0, 0.5, 3});
  auto step = [&](float g) {
    std::vector<torch::Tensor> params = {param_with_grad({g})};
    scaler.unscale(params);
    const bool finite = scaler.gradients_finite();
    scaler.update();
    return finite;
  };
  EXPECT_TRUE(step(1.0f));
  EXPECT_TRUE(step(1.0f));
  EXPECT_EQ(scaler.current_scale(), 1024.0);
  EXPECT_TRUE(step(1.0f));  // the third finite step in a row
  EXPECT_EQ(scaler.current_scale(), 2048.0);
  EXPECT_TRUE(step(1.0f));
  EXPECT_TRUE(step(1.0f));
  EXPECT_FALSE(step(std::numeric_limits<float>::infinity()));  // resets the run of finite steps
  EXPECT_EQ(scaler.current_scale(), 1024.0);
  EXPECT_TRUE(step(1.0f));
  EXPECT_TRUE(step(1.0f));
  EXPECT_EQ(scaler.current_scale(), 1024.0);
  EXPECT_TRUE(step(1.0f));
  EXPECT_EQ(scaler.current_scale(), 2048.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
}

TEST(LossScaler, HostCopyOfTheScaleFollowsTheDevice) {
  LossScaler scaler(torch::kCPU, {65536.0, 2.0, 0.5, 2});
  const float inf = std::numeric_limits<float>::infinity();
  for (float g : {1.0f, inf, inf, 1.0f, 1.0f, 1.0f, inf, 1.0f}) {
    std::vector<torch::Tensor> params = {param_with_grad({g})};
    scaler.unscale(params);
    scaler.gradients_finite();
    scaler.update();
  }
  EXPECT_EQ(scaler.current_scale(), 16384.0);
  EXPECT_EQ(scaler.skipped_steps(), 3);
  // An unread flag leaves the host copy stale: the scale is then read from the device.
  std::vector<torch::Tensor> params = {param_with_grad({inf})};
  scaler.unscale(params);
  scaler.update();
  EXPECT_EQ(scaler.current_scale(), 65536.0 / 2 / 2 * 2 / 2 / 2);  // device value either way
}

}  // namespace
}  // namespace llmprof::train
