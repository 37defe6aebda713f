// Building a run's optimizer and LR schedule from the config (data: run_data.h, model: task.h).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "llmprof/config/config.h"

namespace llmprof::train {

// Throws ConfigError (key device or device_index) unless cfg.device is cpu or a CUDA device this
// build and host have; the message says why not (CPU-only LibTorch, no driver or device). On a
// CUDA device it then configures the caching allocator (configure_cuda_allocator), so a run that
// checks its device first gets the settings before its first CUDA allocation.
void check_device(const config::Config& cfg);

// The CUDA caching allocator's settings a run of cfg gets: PYTORCH_CUDA_ALLOC_CONF (else
// PYTORCH_ALLOC_CONF) as found, with expandable_segments:True added by
// train.cuda_expandable_segments on a CUDA device; "" when neither.
std::string cuda_allocator_settings(const config::Config& cfg);

// train.cuda_expandable_segments on a CUDA device: hands cuda_allocator_settings(cfg) to the
// caching allocator (LibTorch >= 2.1; process-wide, so a later run in the same process keeps
// it). Throws ConfigError naming the key on an older LibTorch or settings it refuses. Nothing
// otherwise.
void configure_cuda_allocator(const config::Config& cfg);

// The CUDA runtime's name of cuda:index ("NVIDIA H100 80GB HBM3"); empty in a build without CUDA.
std::string cuda_device_name(int index);

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
