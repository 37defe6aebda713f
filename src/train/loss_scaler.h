// fp16's dynamic loss scaling, as torch.cuda.amp.GradScaler does it: the loss is multiplied by a
// scale so that small fp16 gradients do not flush to zero; before the optimizer step the
// gradients are unscaled and checked for inf/NaN in one pass (_amp_foreach_non_finite_check_
// and_unscale_); a step with a non-finite gradient is skipped and the scale backs off, and
// growth_interval finite steps in a row grow it (_amp_update_scale_). Scale, tracker and the
// inf flag stay on the device. Private to train (torch).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "llmprof/checkpoint/resume.h"

namespace llmprof::train {

struct LossScalerOptions {
  double init_scale = 65536.0;  // 2^16, GradScaler's default
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class LossScaler : public checkpoint::LossScaleState {
 public:
  explicit LossScaler(torch::Device device, const LossScalerOptions& options = {});

  // The loss times the scale (backward() this one).
  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_; }
  // Divides the gradients of params by the scale in place and records on the device whether any
  // of them holds an inf or NaN. Undefined gradients are skipped.
  void unscale(const std::vector<torch::Tensor>& params);
  // Whether this step's gradients were all finite, i.e. whether the optimizer should step. Reads
  // the flag on the host: a sync, as GradScaler.step's found_inf.item().
  bool gradients_finite();
  // Backs off or grows the scale from this step's flag, on the device; clears the flag.
  void update();

  // The scale the next backward uses. The host follows the device's rule with the flags it read,
  // so this reads nothing from the device unless a step's flag went unread.
  double current_scale() const;
  int64_t skipped_steps() const { return skipped_; }

  // The scale and growth tracker as "loss_scale" and "growth_tracker" (a resumed run goes on
  // with them); load() reads them back to this scaler's device.
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  LossScalerOptions options_;
  torch::Tensor scale_;           // float32, 1 element
  torch::Tensor growth_tracker_;  // int32, 1 element: finite steps in a row
  torch::Tensor found_inf_;       // float32, 1 element: 1 when a gradient was not finite
  std::vector<torch::Tensor> grads_;  // reused between steps
  int64_t skipped_ = 0;
  // The host's copy of scale and tracker, valid while every step's flag was read.
  double host_scale_;
  int64_t host_tracker_ = 0;
  int flag_read_ = -1;  // this step's flag as read: 1 finite, 0 not, -1 unread
  bool host_valid_ = true;
};

}  // namespace llmprof::train
