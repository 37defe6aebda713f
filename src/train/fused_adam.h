// Adam/AdamW through LibTorch's fused multi-tensor kernels (_fused_adam_ / _fused_adamw_): the
// whole update of a param group in a few launches, instead of LibTorch C++'s loop of about ten
// ops per parameter. What torch.optim.AdamW(fused=True) runs; optim.fused picks it.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace llmprof::train {

// Whether this LibTorch has the fused kernels for parameters on `device` (CUDA from 2.1, CPU
// from 2.4).
bool fused_adam_available(const torch::Device& device);

class FusedAdam final : public torch::optim::Optimizer {
 public:
  // decoupled: AdamW's weight decay (else Adam's L2). Groups carry AdamWOptions.
  FusedAdam(std::vector<torch::optim::OptimizerParamGroup> groups,
            const torch::optim::AdamWOptions& defaults, bool decoupled);

  // One fused call per param group; state (moments, step count as a device tensor) is created
  // at the first step that sees a parameter's gradient.
  torch::Tensor step(LossClosure closure = nullptr) override;

  // From now on the update reads its learning rate from a device tensor per group (what a CUDA
  // graph replays), which stage_learning_rates() fills from the groups' options before each step.
  // Throws Error where this LibTorch has no tensor-lr kernels (before 2.4).
  void use_device_learning_rates();
  void stage_learning_rates();

  // The moments and step counts of every parameter that has state, as g<group>.p<index>.<name>
  // (exp_avg, exp_avg_sq, step); load() puts them back (the archive's tensors on the params'
  // device), throwing Error for a shape that differs from its parameter's. torch::save/load.
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  struct ParamState {
    torch::Tensor exp_avg, exp_avg_sq, step;
  };
  bool decoupled_;
  std::vector<torch::Tensor> lr_;  // per group, on the device; empty: the options' double
  std::vector<std::vector<ParamState>> state_;  // [group][param]
  // The lists a fused call takes, rebuilt each step into kept capacity.
  std::vector<torch::Tensor> params_, grads_, exp_avgs_, exp_avg_sqs_, steps_;
};

}  // namespace llmprof::train
