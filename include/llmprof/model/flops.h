// Closed forms for the GPT decoder: parameter count and analytic FLOPs per step.
// Torch-free so the CLI, report and tests can use them.
#pragma once

#include <cstdint>

namespace llmprof::model {

struct GptShape {
  int64_t n_layer, n_head, n_embd, block_size, vocab_size;
  bool bias;
};

// Parameters of nanoGPT's GPT with tied lm_head (counted once):
//   wte V*C + wpe T*C + L * (12 C^2 + 13 C with bias | 12 C^2 + 2 C without) + ln_f (2C | C).
int64_t gpt_parameter_count(const GptShape& s);

// Forward FLOPs for one sequence of T tokens (multiply-add = 2 FLOPs), matmuls only:
//   per layer: qkv 2*T*C*3C + proj 2*T*C*C + mlp 2*T*C*4C*2  = 24*T*C^2
//              scores 2*T*T*C + mix 2*T*T*C                   =  4*T^2*C  (full T x T, as computed)
//   lm_head: 2*T*C*V
// LayerNorm, GELU, softmax, bias and the loss are O(T*C) and left out, as in nanoGPT/PaLM MFU.
double gpt_forward_flops_per_sequence(const GptShape& s);

// FLOPs of one optimizer step: forward + backward (2x forward: grads w.r.t. inputs and weights)
// over batch_size * grad_accum sequences; activation checkpointing adds one recomputed forward
// of the blocks (not of embeddings or lm_head).
double gpt_train_flops_per_step(const GptShape& s,
                                int64_t batch_size,
                                int64_t grad_accum_steps,
                                bool activation_checkpointing);

}  // namespace llmprof::model
