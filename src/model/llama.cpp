#include "llmprof/model/llama.h"

#include <torch/version.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "checkpoint.h"
#include "llmprof/model/fused_loss.h"
#include "llmprof/model/fused_norm.h"
#include "llmprof/model/fused_swiglu.h"
#include "llmprof/profile/scope.h"

namespace llmprof::model {

namespace F = torch::nn::functional;
using profile::Scope;

namespace {
constexpr double kPi = 3.14159265358979323846;
[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("[llama] " + what); }
}  // namespace

void check_llama_options(const LlamaOptions& o) {
  if (o.n_layer < 1 || o.n_head < 1 || o.n_embd < 1 || o.block_size < 1 || o.vocab_size < 1) {
    fail("n_layer, n_head, n_embd, block_size and vocab_size must be >= 1");
  }
  if (o.n_kv_head < 0 || o.n_head % o.kv_heads() != 0) {
    fail("n_kv_head " + std::to_string(o.n_kv_head) + " does not divide n_head " +
         std::to_string(o.n_head));
  }
  if (o.head_dim == 0 && o.n_embd % o.n_head != 0) {
    fail("n_head " + std::to_string(o.n_head) + " does not divide n_embd " +
         std::to_string(o.n_embd) + " (set head_dim)");
  }
  if (o.head_width() < 2 || o.head_width() % 2 != 0) {
    fail("head width " + std::to_string(o.head_width()) + " must be even for the rotary embedding");
  }
  if (o.rope_llama3 && !(o.rope_high_freq_factor > o.rope_low_freq_factor)) {
    fail("rope_scaling llama3: high_freq_factor must exceed low_freq_factor");
  }
}

// ---------------------------------------------------------------------------------------------
// Rotary embedding

std::vector<double> rope_inv_freq(const LlamaOptions& o) {
  // transformers _compute_default_rope_parameters: 1 / base^(arange(0, d, 2) / d).
  const int64_t d = o.head_width();
  std::vector<double> inv(static_cast<size_t>(d / 2));
  for (int64_t i = 0; i < d / 2; ++i) {
    inv[static_cast<size_t>(i)] =
        1.0 / std::pow(o.rope_theta, static_cast<double>(2 * i) / static_cast<double>(d));
  }
  if (!o.rope_llama3) return inv;
  // _compute_llama3_parameters: wavelength = 2 pi / inv_freq; long wavelengths (low frequencies,
  // > original / low_freq_factor) divided by factor, short ones (< original / high_freq_factor)
  // kept; between, smooth = (original / wavelength - low) / (high - low) mixes
  // (1 - smooth) * inv / factor + smooth * inv.
  const double orig = static_cast<double>(o.rope_original_max_positions);
  const double low_wavelen = orig / o.rope_low_freq_factor;
  const double high_wavelen = orig / o.rope_high_freq_factor;
  for (double& f : inv) {
    const double wavelen = 2.0 * kPi / f;
    if (wavelen > low_wavelen) {
      f = f / o.rope_factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (orig / wavelen - o.rope_low_freq_factor) /
                            (o.rope_high_freq_factor - o.rope_low_freq_factor);
      f = (1.0 - smooth) * f / o.rope_factor + smooth * f;
    }
  }
  return inv;
}

namespace {

// cos and sin (T, hd) fp32 of positions 0..T-1: angle[p, j] = p * inv_freq[j mod hd/2]
// (transformers: emb = cat(freqs, freqs)), computed as transformers does in fp32: inv_freq cast
// to fp32, then the fp32 product position * inv_freq.
std::pair<torch::Tensor, torch::Tensor> rope_tables(const LlamaOptions& o) {
  const std::vector<double> inv = rope_inv_freq(o);
  torch::Tensor inv_freq =
      torch::tensor(inv, torch::kDouble).to(torch::kFloat);
  torch::Tensor pos = torch::arange(o.block_size, torch::kFloat);
  torch::Tensor freqs = torch::outer(pos, inv_freq);  // (T, hd/2)
  torch::Tensor emb = torch::cat({freqs, freqs}, -1);  // (T, hd)
  return {emb.cos().contiguous(), emb.sin().contiguous()};
}

}  // namespace

// x (B, T, n, hd) -> x * cos + rotate_half(x) * sin with rotate_half(x) = cat(-x2, x1), in fp32
// (cos/sin fp32; x of any dtype is promoted), cast back to x's dtype. cos/sin (T, 1, hd). The
// halves of cos and of sin are equal, so: out1 = x1 c - x2 s, out2 = x2 c + x1 s.
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t h = x.size(-1) / 2;
  torch::Tensor out = x * cos;  // fp32
  out.narrow(-1, 0, h).addcmul_(x.narrow(-1, h, h), sin.narrow(-1, 0, h), -1);
  out.narrow(-1, h, h).addcmul_(x.narrow(-1, 0, h), sin.narrow(-1, h, h), 1);
  return out.scalar_type() == x.scalar_type() ? out : out.to(x.scalar_type());
}

// ---------------------------------------------------------------------------------------------
// RMSNorm

RmsNormImpl::RmsNormImpl(int64_t width, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({width}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  // LlamaRMSNorm: h = x.float(); h * rsqrt(mean(h^2) + eps); weight * h.to(x.dtype).
  torch::Tensor h = x.to(torch::kFloat);
  torch::Tensor var = h.pow(2).mean(-1, /*keepdim=*/true);
  h = h * torch::rsqrt(var + eps_);
  return weight * h.to(x.scalar_type());
}

std::pair<torch::Tensor, torch::Tensor> RmsNormImpl::add_forward(const torch::Tensor& residual,
                                                                 const torch::Tensor& delta) {
  return add_rms_norm(residual, delta, weight, eps_);
}

// ---------------------------------------------------------------------------------------------
// Attention

LlamaAttentionImpl::LlamaAttentionImpl(const LlamaOptions& opt, int16_t layer)
    : n_head_(opt.n_head), n_kv_head_(opt.kv_heads()), head_dim_(opt.head_width()),
      sdpa_(opt.sdpa), layer_(layer) {
  const int64_t C = opt.n_embd, hd = head_dim_;
  q_proj = register_module("q_proj", Linear(C, n_head_ * hd, opt.attention_bias));
  k_proj = register_module("k_proj", Linear(C, n_kv_head_ * hd, opt.attention_bias));
  v_proj = register_module("v_proj", Linear(C, n_kv_head_ * hd, opt.attention_bias));
  o_proj = register_module("o_proj", Linear(n_head_ * hd, C, false));
  causal_mask = register_buffer(
      "causal_mask",
      torch::ones({opt.block_size, opt.block_size}, torch::kBool).triu(/*diagonal=*/1));
}

void LlamaAttentionImpl::project(const torch::Tensor& x, const torch::Tensor& cos,
                                 const torch::Tensor& sin, torch::Tensor& q, torch::Tensor& k,
                                 torch::Tensor& v) {
  const int64_t B = x.size(0), T = x.size(1);
  {
    LLMPROF_SCOPE(Scope::kAttnQ, layer_);
    q = q_proj(x).view({B, T, n_head_, head_dim_});
  }
  {
    LLMPROF_SCOPE(Scope::kAttnK, layer_);
    k = k_proj(x).view({B, T, n_kv_head_, head_dim_});
  }
  {
    LLMPROF_SCOPE(Scope::kAttnV, layer_);
    v = v_proj(x).view({B, T, n_kv_head_, head_dim_}).transpose(1, 2);  // (B, nkv, T, hd)
  }
  LLMPROF_SCOPE(Scope::kAttnRope, layer_);
  const torch::Tensor c = cos.unsqueeze(1), s = sin.unsqueeze(1);  // (T, 1, hd)
  q = apply_rope(q, c, s).transpose(1, 2);  // (B, nh, T, hd)
  k = apply_rope(k, c, s).transpose(1, 2);  // (B, nkv, T, hd)
}

torch::Tensor LlamaAttentionImpl::manual_core(const torch::Tensor& q, const torch::Tensor& k,
                                              const torch::Tensor& v) {
  // The g query heads of kv head j are heads j*g .. j*g+g-1: q viewed as (B, nkv, g*Tq, hd) meets
  // k (B, nkv, Tk, hd) in one batched matmul, without repeating k or v.
  const int64_t B = q.size(0), Tq = q.size(2), hd = q.size(3);
  const int64_t nkv = k.size(1), Tk = k.size(2), g = n_head_ / nkv;
  torch::Tensor att;
  {
    LLMPROF_SCOPE(Scope::kAttnScores, layer_);
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    att = torch::matmul(q.reshape({B, nkv, g * Tq, hd}), k.transpose(-2, -1)).mul_(scale);
    // Query i sits at position Tk - Tq + i: its mask row is causal_mask[Tk - Tq + i, :Tk].
    att.view({B, nkv, g, Tq, Tk})
        .masked_fill_(causal_mask.slice(0, Tk - Tq, Tk).slice(1, 0, Tk),
                      -std::numeric_limits<float>::infinity());
  }
  {
    LLMPROF_SCOPE(Scope::kAttnSoftmax, layer_);
    att = torch::softmax(att, -1);  // (B, nkv, g*Tq, Tk)
  }
  LLMPROF_SCOPE(Scope::kAttnMix, layer_);
  return torch::matmul(att, v).view({B, n_head_, Tq, hd});  // (B, nkv, g*Tq, hd) = (B, nh, Tq, hd)
}

torch::Tensor LlamaAttentionImpl::fused_core(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v) {
  const int64_t g = n_head_ / k.size(1);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
  if (q.is_cuda() && g > 1) {  // LibTorch's own GQA: no repeated k/v
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, 0.0, /*is_causal=*/true,
                                            /*scale=*/c10::nullopt, /*enable_gqa=*/true);
  }
#endif
  // No GQA in the fused op here: each kv head repeated g times, (B, nh, T, hd) copies of k and v
  // (their memory shows in attn.core's allocations).
  const torch::Tensor kk = g > 1 ? k.repeat_interleave(g, 1) : k;
  const torch::Tensor vv = g > 1 ? v.repeat_interleave(g, 1) : v;
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, kk, vv, /*attn_mask=*/{}, 0.0, /*is_causal=*/true);
#else
  return std::get<0>(at::_scaled_dot_product_attention(q, kk, vv, /*attn_mask=*/{}, 0.0,
                                                       /*need_attn_weights=*/false,
                                                       /*is_causal=*/true));
#endif
}

torch::Tensor LlamaAttentionImpl::core(const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& v) {
  LLMPROF_SCOPE(Scope::kAttnCore, layer_);
  // sdpa's is_causal aligns the mask top-left: only for Tq == Tk (training, prefill).
  return sdpa_ && q.size(2) == k.size(2) ? fused_core(q, k, v) : manual_core(q, k, v);
}

torch::Tensor LlamaAttentionImpl::out(const torch::Tensor& y) {
  LLMPROF_SCOPE(Scope::kAttnO, layer_);
  const int64_t B = y.size(0), T = y.size(2);
  return o_proj(y.transpose(1, 2).contiguous().view({B, T, n_head_ * head_dim_}));
}

torch::Tensor LlamaAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos,
                                          const torch::Tensor& sin) {
  LLMPROF_SCOPE(Scope::kAttn, layer_);
  torch::Tensor q, k, v;
  project(x, cos, sin, q, k, v);
  return out(core(q, k, v));
}

torch::Tensor LlamaAttentionImpl::forward_cached(const torch::Tensor& x,
                                                 const torch::Tensor& cos,
                                                 const torch::Tensor& sin,
                                                 torch::Tensor& k_cache,
                                                 torch::Tensor& v_cache,
                                                 int64_t start) {
  LLMPROF_SCOPE(Scope::kAttn, layer_);
  torch::Tensor q, k, v;
  project(x, cos, sin, q, k, v);
  const int64_t t = x.size(1);
  k_cache.narrow(2, start, t).copy_(k);
  v_cache.narrow(2, start, t).copy_(v);
  return out(core(q, k_cache.narrow(2, 0, start + t), v_cache.narrow(2, 0, start + t)));
}

// ---------------------------------------------------------------------------------------------
// SwiGLU MLP

LlamaMlpImpl::LlamaMlpImpl(const LlamaOptions& opt, int16_t layer)
    : layer_(layer), fused_swiglu_(opt.fused_swiglu) {
  const int64_t C = opt.n_embd, Fw = opt.ffn_width();
  gate_proj = register_module("gate_proj", Linear(C, Fw, false));
  up_proj = register_module("up_proj", Linear(C, Fw, false));
  down_proj = register_module("down_proj", Linear(Fw, C, false));
}

torch::Tensor LlamaMlpImpl::forward(const torch::Tensor& x) {
  LLMPROF_SCOPE(Scope::kMlp, layer_);
  torch::Tensor gate, up, h;
  {
    LLMPROF_SCOPE(Scope::kMlpGate, layer_);
    gate = gate_proj(x);  // (B, T, F)
  }
  {
    LLMPROF_SCOPE(Scope::kMlpUp, layer_);
    up = up_proj(x);  // (B, T, F)
  }
  {
    LLMPROF_SCOPE(Scope::kMlpAct, layer_);
    h = fused_swiglu_ ? swiglu(gate, up) : F::silu(gate) * up;
  }
  LLMPROF_SCOPE(Scope::kMlpDown, layer_);
  return down_proj(h);  // (B, T, C)
}

// ---------------------------------------------------------------------------------------------
// Block

LlamaBlockImpl::LlamaBlockImpl(const LlamaOptions& opt, int16_t layer)
    : layer_(layer), fused_norm_(opt.fused_norm) {
  self_attn = register_module("self_attn", LlamaAttention(opt, layer));
  mlp = register_module("mlp", LlamaMlp(opt, layer));
  input_layernorm = register_module("input_layernorm", RmsNorm(opt.n_embd, opt.rms_norm_eps));
  post_attention_layernorm =
      register_module("post_attention_layernorm", RmsNorm(opt.n_embd, opt.rms_norm_eps));
}

torch::Tensor LlamaBlockImpl::forward(const torch::Tensor& x) {
  if (fused_norm_) {  // one block at a time (activation checkpointing): the MLP's add stays here
    auto [h, mlp_out] = forward_fused(x, torch::Tensor());
    return h + mlp_out;
  }
  const int64_t T = x.size(1);
  return body(x, cos_.slice(0, 0, T), sin_.slice(0, 0, T), nullptr, nullptr, 0);
}

std::pair<torch::Tensor, torch::Tensor> LlamaBlockImpl::forward_fused(const torch::Tensor& residual,
                                                                      const torch::Tensor& delta) {
  LLMPROF_SCOPE(Scope::kBlock, layer_);
  // The adds count to the norms' scope here (to the block's self time unfused).
  const int64_t T = residual.size(1);
  torch::Tensor x = residual, n1;
  {
    LLMPROF_SCOPE(Scope::kNorm, layer_);
    if (delta.defined()) {
      std::tie(x, n1) = input_layernorm->add_forward(residual, delta);
    } else {
      n1 = input_layernorm(x);
    }
  }
  const torch::Tensor a = self_attn->forward(n1, cos_.slice(0, 0, T), sin_.slice(0, 0, T));
  torch::Tensor h, n2;
  {
    LLMPROF_SCOPE(Scope::kNorm, layer_);
    std::tie(h, n2) = post_attention_layernorm->add_forward(x, a);
  }
  return {h, mlp(n2)};
}

torch::Tensor LlamaBlockImpl::forward_cached(const torch::Tensor& x,
                                             const torch::Tensor& cos,
                                             const torch::Tensor& sin,
                                             torch::Tensor& k_cache,
                                             torch::Tensor& v_cache,
                                             int64_t start) {
  return body(x, cos, sin, &k_cache, &v_cache, start);
}

torch::Tensor LlamaBlockImpl::body(const torch::Tensor& x,
                                   const torch::Tensor& cos,
                                   const torch::Tensor& sin,
                                   torch::Tensor* k_cache,
                                   torch::Tensor* v_cache,
                                   int64_t start) {
  LLMPROF_SCOPE(Scope::kBlock, layer_);
  torch::Tensor n1, n2;
  {
    LLMPROF_SCOPE(Scope::kNorm, layer_);
    n1 = input_layernorm(x);
  }
  torch::Tensor h = x + (k_cache == nullptr
                             ? self_attn->forward(n1, cos, sin)
                             : self_attn->forward_cached(n1, cos, sin, *k_cache, *v_cache, start));
  {
    LLMPROF_SCOPE(Scope::kNorm, layer_);
    n2 = post_attention_layernorm(h);
  }
  return h + mlp(n2);  // the residual adds count to the block's self time
}

// ---------------------------------------------------------------------------------------------
// Model

LlamaImpl::LlamaImpl(const LlamaOptions& opt) : opt_(opt) {
  check_llama_options(opt);
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(opt.vocab_size, opt.n_embd));
  layers = register_module("layers", torch::nn::ModuleList());
  auto [cos, sin] = rope_tables(opt);
  rope_cos = register_buffer("rope_cos", cos);
  rope_sin = register_buffer("rope_sin", sin);
  for (int64_t i = 0; i < opt.n_layer; ++i) {
    blocks.push_back(LlamaBlock(opt, static_cast<int16_t>(i)));
    blocks.back()->set_rope(rope_cos, rope_sin);
    layers->push_back(blocks.back());
  }
  norm = register_module("norm", RmsNorm(opt.n_embd, opt.rms_norm_eps));
  if (!opt.tie_embeddings) {
    lm_head = register_module("lm_head", Linear(opt.n_embd, opt.vocab_size, false));
  }
  init_weights();
}

void LlamaImpl::init_weights() {
  // transformers LlamaPreTrainedModel._init_weights: N(0, initializer_range = 0.02) for Linear
  // and Embedding weights, zero biases; RMSNorm weights stay 1.
  torch::NoGradGuard no_grad;
  for (auto& item : named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    if (auto* lin = item.value()->as<Linear>()) {
      lin->weight.normal_(0.0, 0.02);
      if (lin->bias.defined()) lin->bias.zero_();
    } else if (auto* emb = item.value()->as<torch::nn::Embedding>()) {
      emb->weight.normal_(0.0, 0.02);
    }
  }
}

torch::Tensor LlamaImpl::head(const torch::Tensor& x, const torch::Tensor& delta) {
  torch::Tensor h;
  {
    LLMPROF_SCOPE(Scope::kNorm, -1);
    h = delta.defined() ? norm->add_forward(x, delta).second : norm(x);
  }
  LLMPROF_SCOPE(Scope::kLmHead, -1);
  return lm_head.is_empty() ? F::linear(h, embed_tokens->weight) : lm_head(h);  // (B,T,V)
}

torch::Tensor LlamaImpl::forward(const torch::Tensor& idx) {
  const int64_t T = idx.size(1);
  TORCH_CHECK(T <= opt_.block_size, "[llama] sequence length ", T, " exceeds block_size ",
              opt_.block_size);
  torch::Tensor x;
  {
    LLMPROF_SCOPE(Scope::kEmbedding, -1);
    x = embed_tokens(idx);  // (B, T, C)
  }
  const bool checkpoint =
      opt_.activation_checkpointing && is_training() && torch::GradMode::is_enabled();
  torch::Tensor delta;  // model.fused_norm: the last MLP's output, not yet added to x
  if (opt_.fused_norm && !checkpoint) {
    for (auto& block : blocks) std::tie(x, delta) = block->forward_fused(x, delta);
  } else {
    for (auto& block : blocks) x = checkpoint ? checkpointed_forward(block.get(), x) : block(x);
  }
  return head(x, delta);
}

torch::Tensor LlamaImpl::loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  LLMPROF_SCOPE(Scope::kLoss, -1);
  if (opt_.fused_loss) {
    return fused_cross_entropy(logits.view({-1, logits.size(-1)}), targets.view({-1}), -100);
  }
  return F::cross_entropy(logits.view({-1, logits.size(-1)}).to(torch::kFloat),
                          targets.view({-1}));
}

KvCache LlamaImpl::make_cache(int64_t batch, int64_t max_len) const {
  if (batch < 1 || max_len < 1 || max_len > opt_.block_size) {
    fail("make_cache: batch " + std::to_string(batch) + " and max_len " +
         std::to_string(max_len) + " must be >= 1, max_len <= block_size " +
         std::to_string(opt_.block_size));
  }
  KvCache cache;
  cache.capacity = max_len;
  const auto options = embed_tokens->weight.options().requires_grad(false);
  for (size_t i = 0; i < blocks.size(); ++i) {
    cache.k.push_back(torch::zeros({batch, opt_.kv_heads(), max_len, opt_.head_width()}, options));
    cache.v.push_back(torch::zeros({batch, opt_.kv_heads(), max_len, opt_.head_width()}, options));
  }
  return cache;
}

torch::Tensor LlamaImpl::forward_cached(const torch::Tensor& idx, KvCache& cache) {
  torch::NoGradGuard no_grad;
  const int64_t start = cache.length;
  if (idx.dim() != 2 || idx.size(1) < 1 || cache.k.size() != blocks.size() ||
      (!cache.k.empty() && idx.size(0) != cache.k[0].size(0))) {
    fail("forward_cached: idx " + c10::str(idx.sizes()) +
         " must be (B, t>=1) with B the cache's batch, the cache from make_cache of this model");
  }
  const int64_t t = idx.size(1);
  if (start + t > cache.capacity) {
    fail("forward_cached: kv cache overflow: " + std::to_string(t) + " tokens at position " +
         std::to_string(start) + " exceed capacity " + std::to_string(cache.capacity));
  }
  torch::Tensor x;
  {
    LLMPROF_SCOPE(Scope::kEmbedding, -1);
    x = embed_tokens(idx);
  }
  // RoPE at the absolute positions [start, start + t).
  const torch::Tensor cos = rope_cos.slice(0, start, start + t);
  const torch::Tensor sin = rope_sin.slice(0, start, start + t);
  for (size_t i = 0; i < blocks.size(); ++i) {
    x = blocks[i]->forward_cached(x, cos, sin, cache.k[i], cache.v[i], start);
  }
  cache.length = start + t;
  return head(x);
}

int64_t LlamaImpl::num_parameters() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

int64_t LlamaImpl::kv_bytes_per_token(int64_t elem_bytes) const {
  return opt_.n_layer * 2 * opt_.kv_heads() * opt_.head_width() * elem_bytes;
}

}  // namespace llmprof::model
