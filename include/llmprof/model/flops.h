// Closed forms for the GPT decoder and the DistilBERT encoder: parameter count and analytic
// FLOPs per step and per profiling scope. Torch-free so the CLI, report and tests can use them.
#pragma once

#include <array>
#include <cstdint>

#include "llmprof/profile/scope.h"

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

// Forward matmul FLOPs of each module scope for a batch of B sequences of block_size tokens, per
// layer for the block scopes (attn.qkv ... block), for the model for lm_head; -1 for scopes not
// modelled (embedding, LayerNorms, softmax, GELU, loss). Indexed by profile::Scope.
profile::ScopeFlops gpt_scope_forward_flops(const GptShape& s, int64_t B);

// ---------------------------------------------------------------------------------------------
// DistilBERT encoder (model/distilbert.h)

struct EncoderShape {
  int64_t n_layer, n_head, n_embd, ffn_dim;  // L, nh, C, F
  int64_t block_size;                        // T, tokens per sequence
  int64_t vocab_size, max_positions;         // V, rows of the position embedding
  int64_t num_labels;                        // classification head outputs
  int64_t mlm_predictions;                   // P masked positions per sequence; 0 = classify
};

// Parameters with the projector tied to the word embedding (counted once):
//   embeddings V*C + max_positions*C + LayerNorm 2C
//   per layer: qkv 3C^2 + 3C, out_lin C^2 + C, lin1 C*F + F, lin2 F*C + C, 2 LayerNorms 4C
//              = 4C^2 + 2CF + 9C + F
//   MLM head: vocab_transform C^2 + C, vocab_layer_norm 2C, projector bias V
//   classify head: pre_classifier C^2 + C, classifier C*labels + labels
int64_t encoder_parameter_count(const EncoderShape& s);

// Forward FLOPs for one sequence (multiply-add = 2 FLOPs), matmuls only:
//   per layer: qkv 2*T*C*3C + out_lin 2*T*C*C + FFN 2*T*C*F*2 + scores/mix 4*T^2*C
//   head: MLM 2*P*C*C + 2*P*C*V (only the P selected positions); classify 2*C*C + 2*C*labels.
double encoder_forward_flops_per_sequence(const EncoderShape& s);

// FLOPs of one optimizer step: 3x forward (backward = 2x forward) over batch * grad_accum rows.
double encoder_train_flops_per_step(const EncoderShape& s,
                                    int64_t batch_size,
                                    int64_t grad_accum_steps);

// As gpt_scope_forward_flops, for the encoder: lm_head is the MLM or classification head.
profile::ScopeFlops encoder_scope_forward_flops(const EncoderShape& s,
                                                                    int64_t B);

// ---------------------------------------------------------------------------------------------
// Llama-family decoder (model/llama.h): grouped-query attention, SwiGLU, untied or tied head

struct LlamaShape {
  int64_t n_layer, n_head, n_kv_head, n_embd, head_dim;  // L, nh, nkv, C, hd
  int64_t intermediate_size;                             // F
  int64_t block_size, vocab_size;                        // T, V
  bool tie_embeddings, attention_bias;
};

// Parameters (the tied head counted once):
//   embed V*C + per layer (q C*nh*hd + k,v 2*C*nkv*hd + o nh*hd*C + SwiGLU 3*C*F + 2 norms 2C
//   + q/k/v biases (nh + 2 nkv)*hd with attention_bias) + final norm C + lm_head V*C unless tied.
int64_t llama_parameter_count(const LlamaShape& s);

// Forward FLOPs for one sequence of T tokens (multiply-add = 2), matmuls only:
//   per layer: q 2*T*C*nh*hd + k and v 2 * 2*T*C*nkv*hd + o 2*T*nh*hd*C
//              + SwiGLU gate, up, down 3 * 2*T*C*F
//              + scores 2*T*T*nh*hd + mix 2*T*T*nh*hd (every query head, full T x T)
//   lm_head: 2*T*C*V
// GQA saves only in k and v (nkv instead of nh heads); the attention core is the same as MHA's.
// RMSNorm, RoPE, SiLU, softmax and the loss are O(T*C) and left out, as for GPT.
double llama_forward_flops_per_sequence(const LlamaShape& s);

// 3 x forward (+ one recomputed forward of the blocks with activation checkpointing), over
// batch_size * grad_accum_steps sequences, as gpt_train_flops_per_step.
double llama_train_flops_per_step(const LlamaShape& s,
                                  int64_t batch_size,
                                  int64_t grad_accum_steps,
                                  bool activation_checkpointing);

// Forward matmul FLOPs per call of each llama scope (attn.q/k/v/o, attn.core, attn.scores,
// attn.mix, attn, mlp.gate/up/down, mlp, block per layer; lm_head), -1 where not modelled.
profile::ScopeFlops llama_scope_forward_flops(const LlamaShape& s, int64_t B);

// What grouped-query attention saves against a multi-head model of the same width (nh kv heads),
// per token: KV-cache bytes (L * 2 * nkv * hd * elem_bytes against L * 2 * nh * hd * elem_bytes)
// and forward FLOPs of the k/v projections (2 * 2*C*nkv*hd * L against 2 * 2*C*nh*hd * L).
struct GqaSavings {
  int64_t kv_bytes_per_token, mha_kv_bytes_per_token;
  double kv_proj_flops_per_token, mha_kv_proj_flops_per_token;
  double attention_flops_per_token, mha_attention_flops_per_token;  // q,k,v,o + core at T
};
GqaSavings llama_gqa_savings(const LlamaShape& s, int64_t elem_bytes);

}  // namespace llmprof::model
