#include "llmprof/train/setup.h"

#include <fmt/format.h>

#include <torch/version.h>

#include <algorithm>
#include <cmath>

#include "fused_adam.h"
#include "llmprof/error.h"

namespace llmprof::train {

namespace {

// Two parameter groups with base's options: weight decay on `decay` only (as nanoGPT).
template <typename Options>
std::vector<torch::optim::OptimizerParamGroup> decay_groups(
    const std::vector<torch::Tensor>& decay, const std::vector<torch::Tensor>& no_decay,
    const Options& base, double weight_decay) {
  Options wd = base, nwd = base;
  wd.weight_decay(weight_decay);
  nwd.weight_decay(0.0);
  std::vector<torch::optim::OptimizerParamGroup> g;
  g.emplace_back(decay, std::make_unique<Options>(wd));
  g.emplace_back(no_decay, std::make_unique<Options>(nwd));
  return g;
}

template <typename Optim, typename Options>
std::unique_ptr<torch::optim::Optimizer> two_groups(const std::vector<torch::Tensor>& decay,
                                                    const std::vector<torch::Tensor>& no_decay,
                                                    const Options& base, double weight_decay) {
  return std::make_unique<Optim>(decay_groups(decay, no_decay, base, weight_decay), base);
}

// optim.fused: Adam/AdamW through the fused kernels, where this LibTorch has them for the device.
std::unique_ptr<torch::optim::Optimizer> build_fused(const config::Config& cfg,
                                                     const std::vector<torch::Tensor>& decay,
                                                     const std::vector<torch::Tensor>& no_decay) {
  const auto& o = cfg.optim;
  if (o.name == config::Optimizer::kSgd) {
    throw ConfigError("optim.fused: true applies to adam and adamw, not sgd: set optim.fused=false",
                      cfg.source_file, "optim.fused");
  }
  const torch::Device where = decay.empty() ? torch::Device(torch::kCPU) : decay[0].device();
  if (!fused_adam_available(where)) {
    throw ConfigError(fmt::format("optim.fused: true, but LibTorch {} has no fused Adam/AdamW "
                                  "kernels for {} (CUDA from LibTorch 2.1, CPU from 2.4): set "
                                  "optim.fused=false",
                                  TORCH_VERSION, where.str()),
                      cfg.source_file, "optim.fused");
  }
  torch::optim::AdamWOptions base(o.lr);
  base.betas({o.beta1, o.beta2}).eps(o.eps);
  return std::make_unique<FusedAdam>(decay_groups(decay, no_decay, base, o.weight_decay), base,
                                     /*decoupled=*/o.name == config::Optimizer::kAdamw);
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> build_optimizer(const config::Config& cfg,
                                                         torch::nn::Module& model) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& p : model.parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  const auto& o = cfg.optim;
  namespace optim = torch::optim;
  if (o.fused) return build_fused(cfg, decay, no_decay);
  switch (o.name) {
    case config::Optimizer::kAdamw:
      return two_groups<optim::AdamW>(
          decay, no_decay, optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps),
          o.weight_decay);
    case config::Optimizer::kAdam:
      return two_groups<optim::Adam>(
          decay, no_decay, optim::AdamOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps),
          o.weight_decay);
    case config::Optimizer::kSgd:
      return two_groups<optim::SGD>(decay, no_decay, optim::SGDOptions(o.lr).momentum(o.momentum),
                                    o.weight_decay);
  }
  // Only a value cast from an int in code gets here; validate() names it first.
  throw ConfigError(
      fmt::format("optim.name: value {} is not one of sgd|adam|adamw", static_cast<int>(o.name)),
      cfg.source_file, "optim.name");
}

double learning_rate(const config::Config& cfg, int64_t step) {
  const double lr = cfg.optim.lr, min_lr = cfg.schedule.min_lr;
  const int64_t warmup = cfg.schedule.warmup_steps, max_steps = cfg.schedule.max_steps;
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (!cfg.schedule.cosine) return lr;
  if (max_steps <= warmup) return min_lr;
  double ratio = static_cast<double>(step - warmup) / static_cast<double>(max_steps - warmup);
  ratio = std::min(1.0, std::max(0.0, ratio));
  const double coeff = 0.5 * (1.0 + std::cos(M_PI * ratio));  // 1 -> 0
  return min_lr + coeff * (lr - min_lr);
}

void set_learning_rate(torch::optim::Optimizer& opt, double lr) {
  for (auto& group : opt.param_groups()) group.options().set_lr(lr);
}

torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return torch::zeros({});
#if !defined(LLMPROF_NO_TORCH2_FAST_PATHS) &&\
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))
  const bool one_dtype = std::all_of(grads.begin(), grads.end(), [&](const torch::Tensor& g) {
    return g.scalar_type() == grads[0].scalar_type() && g.device() == grads[0].device();
  });
  if (one_dtype) {  // multi-tensor kernels: a few launches instead of two per parameter
    torch::Tensor total = torch::stack(at::_foreach_norm(grads, 2)).norm(2).to(torch::kFloat);
    torch::Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
    at::_foreach_mul_(grads, coef.to(grads[0].scalar_type()));
    return total;
  }
#endif
  std::vector<torch::Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) norms.push_back(g.norm(2).to(torch::kFloat));
  torch::Tensor total = torch::stack(norms).norm(2);
  // clip_coef = max_norm / (total + 1e-6), clamped to <= 1: grads shrink only when too large.
  torch::Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
  for (auto& g : grads) g.mul_(coef.to(g.scalar_type()));
  return total;
}

void zero_grad_to_none(const std::vector<torch::Tensor>& params) {
  for (const auto& p : params) {
    if (p.grad().defined()) {
      const_cast<torch::Tensor&>(p).mutable_grad().reset();
    }
  }
}

}  // namespace llmprof::train
