// nanoGPT's decoder (karpathy/nanoGPT model.py) in LibTorch: token + position embedding,
// pre-LayerNorm blocks of causal multi-head self-attention and a 4x GELU MLP, final LayerNorm,
// lm_head tied to the token embedding. Each attention and MLP sub-step is its own named call
// (qkv, scores, softmax, mix, proj; up, act, down) so the profiler can time each of them.
// Shapes: B batch, T sequence, C = n_embd, nh heads, hs = C / nh head size, V vocabulary.
// Inference can run incrementally with a KvCache: forward_cached appends t tokens' keys/values
// to preallocated per-layer buffers and attends the new queries over everything cached.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "llmprof/model/linear.h"

namespace llmprof::model {

struct GptOptions {
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  int64_t block_size = 64;
  int64_t max_positions = 0;  // wpe rows; 0 = block_size (GPT-2: 1024, trained on shorter blocks)
  int64_t vocab_size = 65;
  double dropout = 0.0;
  bool bias = true;
  bool activation_checkpointing = false;  // recompute each block in backward
  bool gelu_tanh = false;  // GPT-2's gelu_new (tanh approximation); false: exact erf GELU
  bool sdpa = false;       // attention core through scaled_dot_product_attention (fused)
  bool fused_loss = false;  // loss() through llmprof's CUDA cross-entropy kernels
  bool fused_norm = false;  // each residual add fused into the LayerNorm after it (fused_norm.h)
};

// LayerNorm with an optional bias (LibTorch 1.13's nn::LayerNorm has no bias=false).
class LayerNormImpl : public torch::nn::Module {
 public:
  LayerNormImpl(int64_t n_embd, bool bias);
  torch::Tensor forward(const torch::Tensor& x);  // (B, T, C) -> (B, T, C)
  // (h = residual + delta, forward(h)) as one op (model.fused_norm, llmprof/model/fused_norm.h).
  std::pair<torch::Tensor, torch::Tensor> add_forward(const torch::Tensor& residual,
                                                      const torch::Tensor& delta);

  torch::Tensor weight, bias;
  int64_t n_embd_;
};
TORCH_MODULE(LayerNorm);

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  CausalSelfAttentionImpl(const GptOptions& opt, int16_t layer);
  torch::Tensor forward(const torch::Tensor& x);  // (B, T, C) -> (B, T, C)
  // x (B, t, C) at positions [start, start + t): writes its k/v into k_cache/v_cache
  // (B, nh, T_max, hs) at [start, start + t) and attends over [0, start + t) -> (B, t, C).
  torch::Tensor forward_cached(const torch::Tensor& x,
                               torch::Tensor& k_cache,
                               torch::Tensor& v_cache,
                               int64_t start);

  // The sub-steps, in order.
  torch::Tensor qkv(const torch::Tensor& x);  // (B,T,C)->(B,T,3C)
  // q (B,nh,Tq,hs), k (B,nh,Tk,hs), Tq <= Tk: the queries are the last Tq of the Tk positions
  // (Tq = Tk in training) -> (B,nh,Tq,Tk), causally masked with that offset.
  torch::Tensor scores(const torch::Tensor& q, const torch::Tensor& k);
  torch::Tensor softmax(const torch::Tensor& att);                      // (B,nh,T,T)
  torch::Tensor mix(const torch::Tensor& att, const torch::Tensor& v);  // ->(B,T,C)
  // q, k, v (B,nh,T,hs) -> (B,nh,T,hs) through scaled_dot_product_attention, causal.
  torch::Tensor fused_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
  torch::Tensor proj(const torch::Tensor& y);                           // (B,T,C)->(B,T,C)

  Linear c_attn{nullptr}, c_proj{nullptr};
  torch::Tensor causal_mask;  // (T, T) bool, true above the diagonal (future positions)
  int64_t n_head_, n_embd_;
  double dropout_;
  bool sdpa_;
  int16_t layer_;  // block index, for profiling scopes
};
TORCH_MODULE(CausalSelfAttention);

class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(const GptOptions& opt, int16_t layer);
  torch::Tensor forward(const torch::Tensor& x);  // (B, T, C) -> (B, T, C)

  torch::Tensor up(const torch::Tensor& x);    // (B,T,C) -> (B,T,4C)
  torch::Tensor act(const torch::Tensor& h);   // GELU: exact (nanoGPT) or tanh (GPT-2)
  torch::Tensor down(const torch::Tensor& h);  // (B,T,4C) -> (B,T,C), then dropout

  Linear c_fc{nullptr}, c_proj{nullptr};
  double dropout_;
  bool gelu_tanh_;
  int16_t layer_;
};
TORCH_MODULE(Mlp);

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const GptOptions& opt, int16_t layer);
  torch::Tensor forward(const torch::Tensor& x);  // x + attn(ln_1(x)), then + mlp(ln_2(x))
  // model.fused_norm: the block on the residual stream held as residual + delta (delta undefined:
  // none yet), each add fused into the LayerNorm after it: ln_1 takes the previous block's add,
  // ln_2 the attention's. Returns (the stream before the MLP's output, that output); the next
  // block's ln_1 (or ln_f) adds them.
  std::pair<torch::Tensor, torch::Tensor> forward_fused(const torch::Tensor& residual,
                                                        const torch::Tensor& delta);
  // The same with attention over the layer's cache (see CausalSelfAttentionImpl).
  torch::Tensor forward_cached(const torch::Tensor& x,
                               torch::Tensor& k_cache,
                               torch::Tensor& v_cache,
                               int64_t start);

  LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  Mlp mlp{nullptr};
  int16_t layer_;
  bool fused_norm_;
};
TORCH_MODULE(Block);

// Keys and values of the tokens seen so far, per layer (B, nh, capacity, hs), preallocated by
// GptImpl::make_cache; positions [0, length) are filled.
struct KvCache {
  std::vector<torch::Tensor> k, v;
  int64_t length = 0;
  int64_t capacity = 0;
};

class GptImpl : public torch::nn::Module {
 public:
  explicit GptImpl(const GptOptions& opt);

  // idx (B, T) int64 -> logits (B, T, V).
  torch::Tensor forward(const torch::Tensor& idx);
  // Mean cross-entropy of logits (B, T, V) against targets (B, T).
  torch::Tensor loss(const torch::Tensor& logits, const torch::Tensor& targets);

  // An empty cache for `batch` rows of up to max_len (<= block_size) tokens, zeros in the
  // parameters' dtype and device. Throws std::invalid_argument for a bad size.
  KvCache make_cache(int64_t batch, int64_t max_len) const;
  // idx (B, t): tokens at positions [cache.length, cache.length + t) -> logits (B, t, V); stores
  // their k/v in the cache (no reallocation) and advances cache.length. Inference only: runs
  // under NoGradGuard. Throws std::invalid_argument when the tokens do not fit in the cache.
  torch::Tensor forward_cached(const torch::Tensor& idx, KvCache& cache);
  // Greedy decoding: prompt (B, t0) -> (B, t0 + new_tokens), the prompt followed by the argmax
  // tokens, one cached step each. t0 + new_tokens <= block_size.
  torch::Tensor generate(const torch::Tensor& prompt, int64_t new_tokens);

  // Parameters counted once (the tied lm_head is the embedding).
  int64_t num_parameters() const;
  const GptOptions& options() const { return opt_; }

  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  std::vector<Block> blocks;
  LayerNorm ln_f{nullptr};
  torch::Tensor positions;  // (T,) 0..T-1, preallocated

 private:
  void init_weights();
  GptOptions opt_;
};
TORCH_MODULE(Gpt);

}  // namespace llmprof::model
