// LossScaler (loss_scaler.h). On CUDA the two fused AMP ops do the work, as in GradScaler. The
// CPU path computes the same thing with plain tensor ops (LibTorch 1.13 has those ops for CUDA
// only): it is the reference the unit tests check, and what a CPU fp16 loop would use.
#include "loss_scaler.h"

namespace llmprof::train {

LossScaler::LossScaler(torch::Device device, const LossScalerOptions& options)
    : options_(options), host_scale_(options.init_scale) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  scale_ = torch::full({1}, options.init_scale, f32);
  growth_tracker_ = torch::zeros({1}, f32.dtype(torch::kInt));
  found_inf_ = torch::zeros({1}, f32);
}

void LossScaler::unscale(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  grads_.clear();
  for (const auto& p : params) {
    if (p.grad().defined()) grads_.push_back(p.grad());
  }
  const torch::Tensor inv_scale = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  if (scale_.is_cuda()) {
    at::_amp_foreach_non_finite_check_and_unscale_(grads_, found_inf_, inv_scale);
    return;
  }
  for (torch::Tensor& g : grads_) {
    found_inf_.add_(torch::isfinite(g).logical_not().any().to(torch::kFloat)).clamp_max_(1.0);
    g.mul_(inv_scale.to(g.scalar_type()));
  }
}

bool LossScaler::gradients_finite() {
  const bool finite = found_inf_.item<float>() == 0.0f;  // sync: the scaler's one read per step
  flag_read_ = finite ? 1 : 0;
  if (!finite) ++skipped_;
  return finite;
}

void LossScaler::save(torch::serialize::OutputArchive& archive) const {
  // sync: a checkpoint copies the device's scale and tracker (between steps).
  archive.write("loss_scale", scale_.to(torch::kCPU), /*is_buffer=*/true);
  archive.write("growth_tracker", growth_tracker_.to(torch::kCPU), /*is_buffer=*/true);
}

void LossScaler::load(torch::serialize::InputArchive& archive) {
  torch::Tensor scale, tracker;
  archive.read("loss_scale", scale, /*is_buffer=*/true);
  archive.read("growth_tracker", tracker, /*is_buffer=*/true);
  scale_.copy_(scale.to(torch::kFloat).reshape({1}));
  growth_tracker_.copy_(tracker.to(torch::kInt).reshape({1}));
  host_scale_ = scale_.item<double>();
  host_tracker_ = growth_tracker_.item<int64_t>();
  host_valid_ = true;
  flag_read_ = -1;
}

double LossScaler::current_scale() const {
  return host_valid_ ? host_scale_ : scale_.item<double>();
}

void LossScaler::update() {
  torch::NoGradGuard no_grad;
  const LossScalerOptions& o = options_;
  if (scale_.is_cuda()) {
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, o.growth_factor, o.backoff_factor,
                           o.growth_interval);
  } else {
    // _amp_update_scale_'s rule: a non-finite step backs off and resets the tracker; otherwise
    // the tracker counts, and reaching growth_interval grows the scale and resets it.
    const torch::Tensor inf = found_inf_ > 0;
    const torch::Tensor tracked = growth_tracker_ + 1;
    const torch::Tensor grow = tracked.ge(o.growth_interval).logical_and(inf.logical_not());
    scale_.copy_(torch::where(inf, scale_ * o.backoff_factor,
                              torch::where(grow, scale_ * o.growth_factor, scale_)));
    growth_tracker_.copy_(torch::where(inf.logical_or(grow), torch::zeros_like(tracked), tracked));
  }
  found_inf_.zero_();
  // The same rule on the host copy (float32 like the device's scale, so they stay equal).
  if (flag_read_ < 0) {
    host_valid_ = false;
  } else if (flag_read_ == 0) {
    host_scale_ = static_cast<float>(host_scale_ * o.backoff_factor);
    host_tracker_ = 0;
  } else if (++host_tracker_ >= o.growth_interval) {
    host_scale_ = static_cast<float>(host_scale_ * o.growth_factor);
    host_tracker_ = 0;
  }
  flag_read_ = -1;
}

}  // namespace llmprof::train
