// The Llama-family decoder (Llama 2/3, Qwen2, Mistral, SmolLM2) in LibTorch, as Hugging Face's
// LlamaForCausalLM computes it: token embedding, pre-RMSNorm blocks of grouped-query causal
// self-attention with rotary position embeddings (rotate-half convention) and a SwiGLU MLP, a final
// RMSNorm and an lm_head that is its own matrix or the embedding (tie_embeddings).
// Parameter names are Hugging Face's without the leading "model.": embed_tokens.weight,
// layers.{i}.self_attn.{q,k,v,o}_proj.weight (+ q/k/v .bias with attention_bias),
// layers.{i}.mlp.{gate,up,down}_proj.weight, layers.{i}.{input,post_attention}_layernorm.weight,
// norm.weight, lm_head.weight (absent when tied). Linear weights are (out, in).
// Shapes: B batch, T sequence, C = n_embd, nh query heads, nkv key/value heads, g = nh / nkv
// query heads per kv head, hd head width, F intermediate_size, V vocabulary.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "llmprof/model/gpt.h"  // KvCache
#include "llmprof/model/linear.h"

namespace llmprof::model {

struct LlamaOptions {
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_kv_head = 0;          // 0 = n_head
  int64_t n_embd = 128;
  int64_t head_dim = 0;           // 0 = n_embd / n_head
  int64_t intermediate_size = 0;  // 0 = 4 * n_embd
  int64_t block_size = 64;
  int64_t vocab_size = 65;
  double rope_theta = 10000.0;
  double rms_norm_eps = 1e-5;
  bool tie_embeddings = false;
  bool attention_bias = false;  // q/k/v biases (Qwen2)
  // rope_scaling: llama3 (Llama 3.1) when true, with its four parameters.
  bool rope_llama3 = false;
  double rope_factor = 8.0;
  double rope_low_freq_factor = 1.0;
  double rope_high_freq_factor = 4.0;
  int64_t rope_original_max_positions = 8192;
  bool activation_checkpointing = false;
  bool sdpa = false;
  bool fused_loss = false;
  bool fused_norm = false;    // each residual add fused into the RMSNorm after it (fused_norm.h)
  bool fused_swiglu = false;  // silu(gate) * up as one op (fused_swiglu.h)

  int64_t kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }
  int64_t head_width() const { return head_dim > 0 ? head_dim : n_embd / n_head; }
  int64_t ffn_width() const { return intermediate_size > 0 ? intermediate_size : 4 * n_embd; }
};

// inv_freq (hd / 2,) fp64 values as transformers computes them: 1 / theta^(2i / hd), then, with
// rope_llama3, _compute_llama3_parameters' rescaling (wavelengths above original / low_freq_factor
// divided by factor, below original / high_freq_factor kept, smoothly mixed between).
std::vector<double> rope_inv_freq(const LlamaOptions& opt);

// Rotary embedding as transformers' apply_rotary_pos_emb: x * cos + rotate_half(x) * sin with
// rotate_half(x) = cat(-x[..., hd/2:], x[..., :hd/2]). x (..., T, n, hd), cos/sin (T, 1, hd) fp32;
// computed in fp32, returned in x's dtype.
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

// Throws std::invalid_argument naming the fault when opt describes no model (heads, widths).
void check_llama_options(const LlamaOptions& opt);

// RMSNorm: weight * (x / sqrt(mean(x^2) + eps)), the normalisation in fp32, cast back to x's
// dtype before the weight (Hugging Face's LlamaRMSNorm).
class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t width, double eps);
  torch::Tensor forward(const torch::Tensor& x);  // (..., C) -> (..., C)
  // (h = residual + delta, forward(h)) as one op (model.fused_norm, llmprof/model/fused_norm.h).
  std::pair<torch::Tensor, torch::Tensor> add_forward(const torch::Tensor& residual,
                                                      const torch::Tensor& delta);

  torch::Tensor weight;  // (C,), ones
  double eps_;
};
TORCH_MODULE(RmsNorm);

class LlamaAttentionImpl : public torch::nn::Module {
 public:
  LlamaAttentionImpl(const LlamaOptions& opt, int16_t layer);
  // x (B, T, C), cos/sin (T, hd) fp32 rows of positions [0, T) -> (B, T, C).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
  // x (B, t, C) at positions [start, start + t) with cos/sin of those positions: appends k/v to
  // k_cache/v_cache (B, nkv, T_max, hd) and attends over [0, start + t) -> (B, t, C).
  torch::Tensor forward_cached(const torch::Tensor& x,
                               const torch::Tensor& cos,
                               const torch::Tensor& sin,
                               torch::Tensor& k_cache,
                               torch::Tensor& v_cache,
                               int64_t start);

  // q (B, nh, Tq, hd), k/v (B, nkv, Tk, hd), the queries the last Tq of Tk positions ->
  // (B, nh, Tq, hd). Query head h reads kv head h / g.
  torch::Tensor core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

  Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  torch::Tensor causal_mask;  // (T, T) bool, true above the diagonal

 private:
  // x (B, T, C) -> q (B, nh, T, hd), k and v (B, nkv, T, hd), q and k rotated.
  void project(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
               torch::Tensor& q, torch::Tensor& k, torch::Tensor& v);
  torch::Tensor manual_core(const torch::Tensor& q, const torch::Tensor& k,
                            const torch::Tensor& v);
  torch::Tensor fused_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
  torch::Tensor out(const torch::Tensor& y);  // (B, nh, T, hd) -> o_proj -> (B, T, C)

  int64_t n_head_, n_kv_head_, head_dim_;
  bool sdpa_;
  int16_t layer_;
};
TORCH_MODULE(LlamaAttention);

class LlamaMlpImpl : public torch::nn::Module {
 public:
  LlamaMlpImpl(const LlamaOptions& opt, int16_t layer);
  torch::Tensor forward(const torch::Tensor& x);  // down(silu(gate(x)) * up(x)): (B,T,C)->(B,T,C)

  Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
  int16_t layer_;
  bool fused_swiglu_;
};
TORCH_MODULE(LlamaMlp);

class LlamaBlockImpl : public torch::nn::Module {
 public:
  LlamaBlockImpl(const LlamaOptions& opt, int16_t layer);
  // h = x + attn(input_layernorm(x)); h + mlp(post_attention_layernorm(h)).
  torch::Tensor forward(const torch::Tensor& x);
  // model.fused_norm: the block on the stream held as residual + delta (delta undefined: none
  // yet), each add fused into the RMSNorm after it, as GPT's BlockImpl::forward_fused: returns
  // (the stream before the MLP's output, that output).
  std::pair<torch::Tensor, torch::Tensor> forward_fused(const torch::Tensor& residual,
                                                        const torch::Tensor& delta);
  torch::Tensor forward_cached(const torch::Tensor& x,
                               const torch::Tensor& cos,
                               const torch::Tensor& sin,
                               torch::Tensor& k_cache,
                               torch::Tensor& v_cache,
                               int64_t start);
  // The rotary tables of the model, set once after construction (buffers of LlamaImpl).
  void set_rope(const torch::Tensor& cos, const torch::Tensor& sin) {
    cos_ = cos;
    sin_ = sin;
  }

  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  LlamaAttention self_attn{nullptr};
  LlamaMlp mlp{nullptr};
  int16_t layer_;
  bool fused_norm_;

 private:
  // The block with k/v appended to the caches at start, or without a cache (k_cache null).
  torch::Tensor body(const torch::Tensor& x,
                     const torch::Tensor& cos,
                     const torch::Tensor& sin,
                     torch::Tensor* k_cache,
                     torch::Tensor* v_cache,
                     int64_t start);
  torch::Tensor cos_, sin_;  // (T, hd) fp32; sliced to the sequence in forward
};
TORCH_MODULE(LlamaBlock);

class LlamaImpl : public torch::nn::Module {
 public:
  explicit LlamaImpl(const LlamaOptions& opt);

  // idx (B, T) int64 -> logits (B, T, V).
  torch::Tensor forward(const torch::Tensor& idx);
  // Mean cross-entropy of logits (B, T, V) against targets (B, T).
  torch::Tensor loss(const torch::Tensor& logits, const torch::Tensor& targets);

  // An empty cache of nkv heads: (B, nkv, max_len, hd) per layer, parameters' dtype and device.
  KvCache make_cache(int64_t batch, int64_t max_len) const;
  // idx (B, t) at positions [cache.length, cache.length + t) -> logits (B, t, V), RoPE at those
  // positions; appends to the cache. Inference only (NoGradGuard).
  torch::Tensor forward_cached(const torch::Tensor& idx, KvCache& cache);

  int64_t num_parameters() const;  // the tied head counted once
  const LlamaOptions& options() const { return opt_; }
  // Bytes of keys and values one token adds to the cache, elem_bytes per element:
  // n_layer * 2 * nkv * hd * elem_bytes (an MHA model of the same width: n_layer * 2 * nh * hd).
  int64_t kv_bytes_per_token(int64_t elem_bytes) const;

  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  std::vector<LlamaBlock> blocks;  // the same modules as layers, typed
  RmsNorm norm{nullptr};
  Linear lm_head{nullptr};         // null when tied: the head is embed_tokens.weight
  torch::Tensor rope_cos, rope_sin;  // (block_size, hd) fp32 buffers, computed once

 private:
  void init_weights();
  // Final norm (of x + delta with model.fused_norm's pending delta, else of x) + lm_head.
  torch::Tensor head(const torch::Tensor& x, const torch::Tensor& delta = {});
  LlamaOptions opt_;
};
TORCH_MODULE(Llama);

}  // namespace llmprof::model
