// Building a run's pieces from the config: token data, model, optimizer and LR schedule.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/data/dataset.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/model/gpt.h"

namespace llmprof::train {

struct TokenData {
  std::unique_ptr<data::Tokenizer> tokenizer;
  data::TokenSplits splits;
  std::string source;     // corpus path, or "generated(seed=…, chars=…)"
  int64_t corpus_bytes = 0;
};

// Reads data.path (or generates the corpus), builds the tokenizer, encodes, splits.
// Throws DataError/ConfigError.
TokenData load_token_data(const config::Config& cfg);

// The GPT for cfg with vocab_size from the tokenizer (model.vocab_size 0) or the config, which must
// then be >= the tokenizer's. Seeds torch with train.seed first, so init is reproducible.
model::Gpt build_model(const config::Config& cfg, int64_t tokenizer_vocab_size);

// SGD/Adam/AdamW over two groups, as nanoGPT: weight decay on matrices (dim >= 2) only.
std::unique_ptr<torch::optim::Optimizer> build_optimizer(const config::Config& cfg,
                                                         model::Gpt& model);

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
