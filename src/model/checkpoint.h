// Activation checkpointing for one transformer block (torch.utils.checkpoint, reentrant form):
// the forward keeps only the block's input; backward recomputes the block with grad enabled
// under the same autocast and RNG state, then back-propagates through the recomputed graph.
#pragma once

#include <torch/torch.h>

namespace llmprof::model {

class BlockImpl;
class LlamaBlockImpl;

// y = block(x) without saving the block's activations (GPT and Llama blocks).
torch::Tensor checkpointed_forward(BlockImpl* block, const torch::Tensor& x);
torch::Tensor checkpointed_forward(LlamaBlockImpl* block, const torch::Tensor& x);

}  // namespace llmprof::model
