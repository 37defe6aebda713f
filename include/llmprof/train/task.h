// A Task is a model with its objective: what the train loop, llmprof eval and llmprof bench need,
// whatever the model type. lm: the nanoGPT decoder on next-token prediction; mlm: the DistilBERT
// encoder on masked-token prediction; classify: the encoder on sequence classification.
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "llmprof/config/enums.h"
#include "llmprof/data/loader.h"
#include "llmprof/model/decoder.h"
#include "llmprof/model/gpt.h"
#include "llmprof/profile/scope.h"
#include "llmprof/rundir/summary_context.h"

namespace llmprof::config {
struct Config;
}
namespace llmprof::device {
class DeviceContext;
}

namespace llmprof::train {

// One batch as tensors. From the loader they wrap its buffers (no copy); mask and pos are
// undefined when the layout has none. x (B, T), y (B, T | P | 1), mask (B, T), pos (B, P).
struct Batch {
  torch::Tensor x, y, mask, pos;
};

// Wraps a loader batch without copying; valid until the loader slot is released.
Batch wrap_batch(const data::BatchView& v);
// Copies a sampler's batch `index` into owned tensors (eval sets built once, before training).
Batch make_batch(const data::BatchSampler& sampler, int64_t index);
// A loader batch on the device: an asynchronous copy from its pinned slot (DeviceContext::
// to_device); on the CPU the batch itself.
Batch to_device(device::DeviceContext& device, const Batch& b);
// A batch owned by the caller (eval sets), copied to the device once.
Batch copy_to_device(const device::DeviceContext& device, const Batch& b);

// Sums over eval batches: the loss is averaged over targets, not batches, so a short last batch
// weighs what it holds.
struct EvalSums {
  double loss_sum = 0;    // summed cross-entropy of every target, nats
  int64_t targets = 0;    // tokens (lm, mlm) or sequences (classify) that took loss
  int64_t correct = 0;    // classify: argmax == label
  int64_t batches = 0;
  int64_t rows = 0;       // real sequences (rows with a scored target; padding rows excluded)
  int64_t tokens = 0;     // input positions of the real sequences (rows * T)
  double mean_loss() const { return targets > 0 ? loss_sum / static_cast<double>(targets) : NAN; }
  double accuracy() const {
    return targets > 0 ? static_cast<double>(correct) / static_cast<double>(targets) : NAN;
  }
};

class Task {
 public:
  virtual ~Task() = default;
  virtual config::TaskKind kind() const = 0;
  std::string name() const { return std::string(config::name(kind())); }  // lm | mlm | classify
  virtual torch::nn::Module& module() = 0;
  virtual int64_t num_parameters() = 0;
  // Training forward: the mean loss of the batch (a 0-dim tensor).
  virtual torch::Tensor loss(const Batch& b) = 0;
  // Inference forward: lm (B, T, V), mlm (B, P, V), classify (B, K).
  virtual torch::Tensor logits(const Batch& b) = 0;
  // Adds one batch to sums (loss, targets, correct). The caller sets no-grad and eval mode.
  void eval_batch(const Batch& b, EvalSums& sums);
  // classify reports accuracy; lm and mlm report perplexity.
  bool reports_accuracy() const { return kind() == config::TaskKind::kClassify; }

  // Analytic FLOPs (model/flops.h): forward of one sequence, one optimizer step, per scope call.
  virtual double forward_flops_per_sequence() const = 0;
  virtual double train_flops_per_step(int64_t batch_size, int64_t grad_accum_steps,
                                      bool activation_checkpointing) const = 0;
  virtual profile::ScopeFlops scope_forward_flops(int64_t batch_size) const = 0;
  virtual std::string flops_formula(bool activation_checkpointing) const = 0;
  // One line for the log: "gpt L=4 H=4 C=128 T=64 V=65".
  virtual std::string describe() const = 0;
  // summary.json's "model" section, nullopt for none. llama: grouped-query attention's KV-cache
  // bytes and attention FLOPs per token against a multi-head model of the same width, each K/V
  // element kv_element_bytes wide (the run's precision).
  virtual std::optional<rundir::ModelFigures> model_figures(int64_t /*kv_element_bytes*/) const {
    return std::nullopt;
  }
  // The decoder, for KV-cache generation; null for the encoder tasks.
  virtual model::Gpt* gpt() { return nullptr; }
  // The decoder (gpt, llama) for KV-cache generation; null for the encoder tasks.
  virtual model::Decoder* decoder() { return nullptr; }
};

// The task cfg describes, with its model built and initialised (seeded with train.seed);
// vocab_size from the tokenizer (model.vocab_size 0) or the config, which must then be >= it.
// mlm_predictions: P, the predicted positions per sequence (mlm only).
std::unique_ptr<Task> make_task(const config::Config& cfg, int64_t tokenizer_vocab_size,
                                int64_t mlm_predictions);

}  // namespace llmprof::train
