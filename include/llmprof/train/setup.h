// Building a run's optimizer and LR schedule from the config (data: run_data.h, model: task.h;
// the device is checked by llmprof/device/device.h).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "llmprof/config/config.h"

namespace llmprof::train {

// SGD/Adam/AdamW over two groups, as nanoGPT: weight decay on matrices (dim >= 2) only.
std::unique_ptr<torch::optim::Optimizer> build_optimizer(const config::Config& cfg,
                                                         torch::nn::Module& model);

// Learning rate at optimizer step `step` (0-based): linear warmup over warmup_steps to optim.lr,
// then cosine to min_lr at max_steps (nanoGPT get_lr), or constant when schedule.cosine is false.
double learning_rate(const config::Config& cfg, int64_t step);

// Sets every param group's lr.
void set_learning_rate(torch::optim::Optimizer& opt, double lr);

// Global-norm gradient clipping without a host sync: scales grads by min(1, max_norm / norm) on
// the device and returns the pre-clip total norm as a 0-dim tensor (read it after the step).
torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm);

// zero_grad(set_to_none=True): drops gradients instead of memsetting them (nanoGPT's choice).
void zero_grad_to_none(const std::vector<torch::Tensor>& params);

}  // namespace llmprof::train
