// The model a config trains, as a module alone: what checkpoint::export_hf loads a checkpoint
// into (checkpoint::ModelFactory). Torch-free header: the CLI includes it without paying for
// <torch/torch.h>.
#pragma once

#include <cstdint>
#include <memory>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace llmprof::config {
struct Config;
}

namespace llmprof::train {

// make_task's model for cfg (its task's head included) with vocab_size tokens, its parameters
// named as a checkpoint stores them; the task is kept alive by the pointer.
std::shared_ptr<torch::nn::Module> task_model(const config::Config& cfg, int64_t vocab_size);

}  // namespace llmprof::train
