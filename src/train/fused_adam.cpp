#include "fused_adam.h"

#include <torch/version.h>

#include "llmprof/error.h"

// _fused_adamw_ (and the CUDA kernels of both) since LibTorch 2.1, CPU kernels since 2.4.
#if !defined(LLMPROF_NO_TORCH2_FAST_PATHS) &&\
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))
#define LLMPROF_FUSED_ADAM 1
#endif
#if !defined(LLMPROF_NO_TORCH2_FAST_PATHS) &&\
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
#define LLMPROF_FUSED_ADAM_TENSOR_LR 1
#endif

namespace llmprof::train {

bool fused_adam_available(const torch::Device& device) {
#if defined(LLMPROF_FUSED_ADAM)
  if (device.is_cuda()) return true;
  return device.is_cpu() && (TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 4);
#else
  (void)device;
  return false;
#endif
}

FusedAdam::FusedAdam(std::vector<torch::optim::OptimizerParamGroup> groups,
                     const torch::optim::AdamWOptions& defaults, bool decoupled)
    : torch::optim::Optimizer(std::move(groups),
                              std::make_unique<torch::optim::AdamWOptions>(defaults)),
      decoupled_(decoupled) {
  size_t most = 0;
  for (const auto& g : param_groups()) {
    state_.emplace_back(g.params().size());
    most = std::max(most, g.params().size());
  }
  for (auto* list : {&params_, &grads_, &exp_avgs_, &exp_avg_sqs_, &steps_}) list->reserve(most);
}

torch::Tensor FusedAdam::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) loss = closure();
#if defined(LLMPROF_FUSED_ADAM)
  for (size_t gi = 0; gi < param_groups().size(); ++gi) {
    auto& group = param_groups()[gi];
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    for (auto* list : {&params_, &grads_, &exp_avgs_, &exp_avg_sqs_, &steps_}) list->clear();
    for (size_t i = 0; i < group.params().size(); ++i) {
      const torch::Tensor& p = group.params()[i];
      if (!p.grad().defined()) continue;
      ParamState& s = state_[gi][i];
      if (!s.step.defined()) {  // first sight: allocated once, as torch.optim does
        s.exp_avg = torch::zeros_like(p, torch::MemoryFormat::Preserve);
        s.exp_avg_sq = torch::zeros_like(p, torch::MemoryFormat::Preserve);
        s.step = torch::zeros({}, p.options().dtype(torch::kFloat));
      }
      params_.push_back(p);
      grads_.push_back(p.grad());
      exp_avgs_.push_back(s.exp_avg);
      exp_avg_sqs_.push_back(s.exp_avg_sq);
      steps_.push_back(s.step);
    }
    if (params_.empty()) continue;
    // The kernels read the step count for bias correction; advancing it is the caller's part
    // (as torch.optim's _fused_adamw does), on the device.
    at::_foreach_add_(steps_, 1);
    const auto [beta1, beta2] = o.betas();
#if defined(LLMPROF_FUSED_ADAM_TENSOR_LR)
    if (!lr_.empty()) {
      if (decoupled_) {
        at::_fused_adamw_(params_, grads_, exp_avgs_, exp_avg_sqs_, {}, steps_, lr_[gi], beta1,
                          beta2, o.weight_decay(), o.eps(), false, false);
      } else {
        at::_fused_adam_(params_, grads_, exp_avgs_, exp_avg_sqs_, {}, steps_, lr_[gi], beta1,
                         beta2, o.weight_decay(), o.eps(), false, false);
      }
      continue;
    }
#endif
    if (decoupled_) {
      at::_fused_adamw_(params_, grads_, exp_avgs_, exp_avg_sqs_, /*max_exp_avg_sqs=*/{}, steps_,
                        o.lr(), beta1, beta2, o.weight_decay(), o.eps(), /*amsgrad=*/false,
                        /*maximize=*/false);
    } else {
      at::_fused_adam_(params_, grads_, exp_avgs_, exp_avg_sqs_, /*max_exp_avg_sqs=*/{}, steps_,
                       o.lr(), beta1, beta2, o.weight_decay(), o.eps(), /*amsgrad=*/false,
                       /*maximize=*/false);
    }
  }
#else
  (void)decoupled_;
  throw Error("optim.fused: this LibTorch " TORCH_VERSION " has no fused Adam kernels");
#endif
  return loss;
}

namespace {

std::string state_key(size_t group, size_t index, const char* name) {
  return "g" + std::to_string(group) + ".p" + std::to_string(index) + "." + name;
}

}  // namespace

void FusedAdam::save(torch::serialize::OutputArchive& archive) const {
  for (size_t gi = 0; gi < state_.size(); ++gi) {
    for (size_t i = 0; i < state_[gi].size(); ++i) {
      const ParamState& s = state_[gi][i];
      if (!s.step.defined()) continue;  // no gradient yet: no state, as torch.optim
      archive.write(state_key(gi, i, "exp_avg"), s.exp_avg, /*is_buffer=*/true);
      archive.write(state_key(gi, i, "exp_avg_sq"), s.exp_avg_sq, /*is_buffer=*/true);
      archive.write(state_key(gi, i, "step"), s.step, /*is_buffer=*/true);
    }
  }
}

void FusedAdam::load(torch::serialize::InputArchive& archive) {
  torch::NoGradGuard no_grad;
  for (size_t gi = 0; gi < state_.size(); ++gi) {
    for (size_t i = 0; i < state_[gi].size(); ++i) {
      ParamState s;
      if (!archive.try_read(state_key(gi, i, "step"), s.step)) {
        state_[gi][i] = ParamState{};
        continue;
      }
      const torch::Tensor& p = param_groups()[gi].params()[i];
      archive.read(state_key(gi, i, "exp_avg"), s.exp_avg, /*is_buffer=*/true);
      archive.read(state_key(gi, i, "exp_avg_sq"), s.exp_avg_sq, /*is_buffer=*/true);
      if (!s.exp_avg.sizes().equals(p.sizes()) || !s.exp_avg_sq.sizes().equals(p.sizes())) {
        throw Error("optimizer state " + state_key(gi, i, "exp_avg") +
                    " does not have its parameter's shape");
      }
      s.exp_avg = s.exp_avg.to(p.device(), p.scalar_type());
      s.exp_avg_sq = s.exp_avg_sq.to(p.device(), p.scalar_type());
      s.step = s.step.to(p.device(), torch::kFloat);
      state_[gi][i] = std::move(s);
    }
  }
}

void FusedAdam::use_device_learning_rates() {
#if defined(LLMPROF_FUSED_ADAM_TENSOR_LR)
  lr_.clear();
  for (const auto& g : param_groups()) {
    const torch::Device where = g.params().empty() ? torch::Device(torch::kCPU)
                                                   : g.params()[0].device();
    lr_.push_back(torch::full({}, g.options().get_lr(),
                              torch::TensorOptions().dtype(torch::kFloat).device(where)));
  }
#else
  throw Error("train.cuda_graphs: LibTorch " TORCH_VERSION " has no fused AdamW with a device "
              "learning rate (LibTorch >= 2.4)");
#endif
}

void FusedAdam::stage_learning_rates() {
  for (size_t gi = 0; gi < lr_.size(); ++gi) lr_[gi].fill_(param_groups()[gi].options().get_lr());
}

}  // namespace llmprof::train
