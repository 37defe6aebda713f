#include "llmprof/model/gpt.h"

#include <torch/version.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "checkpoint.h"
#include "llmprof/model/autocast.h"
#include "llmprof/model/fused_loss.h"
#include "llmprof/model/fused_norm.h"
#include "llmprof/profile/scope.h"

namespace llmprof::model {

namespace F = torch::nn::functional;
using profile::Scope;

// ---------------------------------------------------------------------------------------------
// LayerNorm

LayerNormImpl::LayerNormImpl(int64_t n_embd, bool with_bias) : n_embd_(n_embd) {
  weight = register_parameter("weight", torch::ones({n_embd}));
  if (with_bias) bias = register_parameter("bias", torch::zeros({n_embd}));
}

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  return torch::layer_norm(x, {n_embd_}, weight, bias, 1e-5);
}

std::pair<torch::Tensor, torch::Tensor> LayerNormImpl::add_forward(const torch::Tensor& residual,
                                                                   const torch::Tensor& delta) {
  return add_layer_norm(residual, delta, weight, bias, 1e-5);
}

// ---------------------------------------------------------------------------------------------
// Attention

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GptOptions& opt, int16_t layer)
    : n_head_(opt.n_head), n_embd_(opt.n_embd), dropout_(opt.dropout), sdpa_(opt.sdpa),
      layer_(layer) {
  c_attn = register_module("c_attn", Linear(opt.n_embd, 3 * opt.n_embd, opt.bias));
  c_proj = register_module("c_proj", Linear(opt.n_embd, opt.n_embd, opt.bias));
  // True where key position > query position: those scores become -inf before softmax.
  causal_mask = register_buffer(
      "causal_mask",
      torch::ones({opt.block_size, opt.block_size}, torch::kBool).triu(/*diagonal=*/1));
}

torch::Tensor CausalSelfAttentionImpl::qkv(const torch::Tensor& x) {
  LLMPROF_SCOPE(Scope::kAttnQkv, layer_);
  return c_attn(x);
}

torch::Tensor CausalSelfAttentionImpl::scores(const torch::Tensor& q, const torch::Tensor& k) {
  // (B,nh,Tq,hs) x (B,nh,hs,Tk) -> (B,nh,Tq,Tk), scaled by 1/sqrt(hs), future masked to -inf.
  // Query i sits at absolute position Tk - Tq + i (the cached prefix precedes it), so its mask
  // row is causal_mask[Tk - Tq + i, :Tk]; each row keeps at least its own key, never all -inf.
  LLMPROF_SCOPE(Scope::kAttnScores, layer_);
  const int64_t Tq = q.size(2), Tk = k.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)).mul_(scale);
  return att.masked_fill_(causal_mask.slice(0, Tk - Tq, Tk).slice(1, 0, Tk),
                          -std::numeric_limits<float>::infinity());
}

torch::Tensor CausalSelfAttentionImpl::softmax(const torch::Tensor& att) {
  LLMPROF_SCOPE(Scope::kAttnSoftmax, layer_);
  torch::Tensor p = torch::softmax(att, -1);
  if (dropout_ > 0 && is_training()) p = F::dropout(p, F::DropoutFuncOptions().p(dropout_));
  return p;
}

torch::Tensor CausalSelfAttentionImpl::mix(const torch::Tensor& att, const torch::Tensor& v) {
  // (B,nh,T,T) x (B,nh,T,hs) -> (B,nh,T,hs) -> (B,T,nh,hs) -> (B,T,C)
  LLMPROF_SCOPE(Scope::kAttnMix, layer_);
  torch::Tensor y = torch::matmul(att, v);
  return y.transpose(1, 2).contiguous().view({y.size(0), y.size(2), n_embd_});
}

torch::Tensor CausalSelfAttentionImpl::proj(const torch::Tensor& y) {
  LLMPROF_SCOPE(Scope::kAttnProj, layer_);
  torch::Tensor out = c_proj(y);
  if (dropout_ > 0 && is_training()) out = F::dropout(out, F::DropoutFuncOptions().p(dropout_));
  return out;
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x) {
  LLMPROF_SCOPE(Scope::kAttn, layer_);
  const int64_t B = x.size(0), T = x.size(1), hs = n_embd_ / n_head_;
  auto parts = qkv(x).split(n_embd_, 2);  // 3 x (B,T,C)
  auto heads = [&](const torch::Tensor& t) { return t.view({B, T, n_head_, hs}).transpose(1, 2); };
  torch::Tensor y;
  {
    LLMPROF_SCOPE(Scope::kAttnCore, layer_);  // scores + mask + softmax + weighted sum
    if (sdpa_) {
      y = fused_core(heads(parts[0]), heads(parts[1]), heads(parts[2]));
      y = y.transpose(1, 2).contiguous().view({B, T, n_embd_});
    } else {
      torch::Tensor att = softmax(scores(heads(parts[0]), heads(parts[1])));
      y = mix(att, heads(parts[2]));
    }
  }
  return proj(y);
}

torch::Tensor CausalSelfAttentionImpl::fused_core(const torch::Tensor& q, const torch::Tensor& k,
                                                  const torch::Tensor& v) {
  // One op for the core, causal: flash (or memory-efficient) attention on CUDA; the sub-scopes
  // scores/softmax/mix are not separable inside it.
  const double p = dropout_ > 0 && is_training() ? dropout_ : 0.0;
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, p, /*is_causal=*/true);
#else
  return std::get<0>(at::_scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, p,
                                                       /*need_attn_weights=*/false,
                                                       /*is_causal=*/true));
#endif
}

torch::Tensor CausalSelfAttentionImpl::forward_cached(const torch::Tensor& x,
                                                      torch::Tensor& k_cache,
                                                      torch::Tensor& v_cache,
                                                      int64_t start) {
  LLMPROF_SCOPE(Scope::kAttn, layer_);
  const int64_t B = x.size(0), t = x.size(1), hs = n_embd_ / n_head_;
  auto parts = qkv(x).split(n_embd_, 2);  // 3 x (B,t,C)
  auto heads = [&](const torch::Tensor& u) { return u.view({B, t, n_head_, hs}).transpose(1, 2); };
  torch::Tensor y;
  {
    LLMPROF_SCOPE(Scope::kAttnCore, layer_);
    // Append this chunk's keys/values in place, then attend over positions [0, start + t).
    k_cache.narrow(2, start, t).copy_(heads(parts[1]));
    v_cache.narrow(2, start, t).copy_(heads(parts[2]));
    torch::Tensor k = k_cache.narrow(2, 0, start + t), v = v_cache.narrow(2, 0, start + t);
    y = mix(softmax(scores(heads(parts[0]), k)), v);  // (B,nh,t,start+t) x (B,nh,start+t,hs)
  }
  return proj(y);
}

// ---------------------------------------------------------------------------------------------
// MLP

MlpImpl::MlpImpl(const GptOptions& opt, int16_t layer)
    : dropout_(opt.dropout), gelu_tanh_(opt.gelu_tanh), layer_(layer) {
  c_fc = register_module("c_fc", Linear(opt.n_embd, 4 * opt.n_embd, opt.bias));
  c_proj = register_module("c_proj", Linear(4 * opt.n_embd, opt.n_embd, opt.bias));
}

torch::Tensor MlpImpl::up(const torch::Tensor& x) {
  LLMPROF_SCOPE(Scope::kMlpUp, layer_);
  return c_fc(x);
}
torch::Tensor MlpImpl::act(const torch::Tensor& h) {
  LLMPROF_SCOPE(Scope::kMlpAct, layer_);
  return gelu_tanh_ ? torch::gelu(h, "tanh") : torch::gelu(h);
}
torch::Tensor MlpImpl::down(const torch::Tensor& h) {
  LLMPROF_SCOPE(Scope::kMlpDown, layer_);
  torch::Tensor out = c_proj(h);
  if (dropout_ > 0 && is_training()) out = F::dropout(out, F::DropoutFuncOptions().p(dropout_));
  return out;
}
torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  LLMPROF_SCOPE(Scope::kMlp, layer_);
  return down(act(up(x)));
}

// ---------------------------------------------------------------------------------------------
// Block

BlockImpl::BlockImpl(const GptOptions& opt, int16_t layer)
    : layer_(layer), fused_norm_(opt.fused_norm) {
  ln_1 = register_module("ln_1", LayerNorm(opt.n_embd, opt.bias));
  attn = register_module("attn", CausalSelfAttention(opt, layer));
  ln_2 = register_module("ln_2", LayerNorm(opt.n_embd, opt.bias));
  mlp = register_module("mlp", Mlp(opt, layer));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x) {
  if (fused_norm_) {  // one block at a time (activation checkpointing): the MLP's add stays here
    auto [h, mlp_out] = forward_fused(x, torch::Tensor());
    return h + mlp_out;
  }
  LLMPROF_SCOPE(Scope::kBlock, layer_);
  torch::Tensor n1;
  {
    LLMPROF_SCOPE(Scope::kLn1, layer_);
    n1 = ln_1(x);
  }
  torch::Tensor h = x + attn(n1);  // the residual add counts to the block's self time
  torch::Tensor n2;
  {
    LLMPROF_SCOPE(Scope::kLn2, layer_);
    n2 = ln_2(h);
  }
  return h + mlp(n2);
}

std::pair<torch::Tensor, torch::Tensor> BlockImpl::forward_fused(const torch::Tensor& residual,
                                                                 const torch::Tensor& delta) {
  LLMPROF_SCOPE(Scope::kBlock, layer_);
  // The adds count to the norms' scopes here (to the block's self time unfused).
  torch::Tensor x = residual, n1;
  {
    LLMPROF_SCOPE(Scope::kLn1, layer_);
    if (delta.defined()) {
      std::tie(x, n1) = ln_1->add_forward(residual, delta);
    } else {
      n1 = ln_1(x);
    }
  }
  const torch::Tensor a = attn(n1);
  torch::Tensor h, n2;
  {
    LLMPROF_SCOPE(Scope::kLn2, layer_);
    std::tie(h, n2) = ln_2->add_forward(x, a);
  }
  return {h, mlp(n2)};
}

torch::Tensor BlockImpl::forward_cached(const torch::Tensor& x,
                                        torch::Tensor& k_cache,
                                        torch::Tensor& v_cache,
                                        int64_t start) {
  LLMPROF_SCOPE(Scope::kBlock, layer_);
  torch::Tensor n1;
  {
    LLMPROF_SCOPE(Scope::kLn1, layer_);
    n1 = ln_1(x);
  }
  torch::Tensor h = x + attn->forward_cached(n1, k_cache, v_cache, start);
  torch::Tensor n2;
  {
    LLMPROF_SCOPE(Scope::kLn2, layer_);
    n2 = ln_2(h);
  }
  return h + mlp(n2);
}

// ---------------------------------------------------------------------------------------------
// GPT

GptImpl::GptImpl(const GptOptions& opt) : opt_(opt) {
  wte = register_module("wte", torch::nn::Embedding(opt.vocab_size, opt.n_embd));
  const int64_t n_positions = opt.max_positions > 0 ? opt.max_positions : opt.block_size;
  if (n_positions < opt.block_size) {
    throw std::invalid_argument("[gpt] max_positions " + std::to_string(n_positions) +
                                " is less than block_size " + std::to_string(opt.block_size));
  }
  wpe = register_module("wpe", torch::nn::Embedding(n_positions, opt.n_embd));
  for (int64_t i = 0; i < opt.n_layer; ++i) {
    blocks.push_back(register_module("h" + std::to_string(i), Block(opt, static_cast<int16_t>(i))));
  }
  ln_f = register_module("ln_f", LayerNorm(opt.n_embd, opt.bias));
  positions = register_buffer("positions", torch::arange(opt.block_size, torch::kLong));
  init_weights();
}

void GptImpl::init_weights() {
  // nanoGPT: N(0, 0.02) for Linear and Embedding weights, zero biases, and the residual
  // projections (attn.c_proj, mlp.c_proj) scaled by 1/sqrt(2 * n_layer) (GPT-2 paper).
  torch::NoGradGuard no_grad;
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(opt_.n_layer));
  for (auto& item : named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    if (auto* lin = item.value()->as<Linear>()) {
      const bool residual = item.key().size() >= 6 &&
                            item.key().compare(item.key().size() - 6, 6, "c_proj") == 0;
      lin->weight.normal_(0.0, residual ? proj_std : 0.02);
      if (lin->bias.defined()) lin->bias.zero_();
    } else if (auto* emb = item.value()->as<torch::nn::Embedding>()) {
      emb->weight.normal_(0.0, 0.02);
    }
  }
}

torch::Tensor GptImpl::forward(const torch::Tensor& idx) {
  const int64_t T = idx.size(1);
  TORCH_CHECK(T <= opt_.block_size, "[gpt] sequence length ", T, " exceeds block_size ",
              opt_.block_size);
  torch::Tensor x;
  {
    LLMPROF_SCOPE(Scope::kEmbedding, -1);
    x = wte(idx) + wpe(positions.slice(0, 0, T));  // (B,T,C) + (T,C)
    if (opt_.dropout > 0 && is_training()) {
      x = F::dropout(x, F::DropoutFuncOptions().p(opt_.dropout));
    }
  }
  const bool checkpoint = opt_.activation_checkpointing && is_training() &&
                          torch::GradMode::is_enabled();
  torch::Tensor delta;  // model.fused_norm: the last MLP's output, not yet added to x
  if (opt_.fused_norm && !checkpoint) {
    for (auto& block : blocks) std::tie(x, delta) = block->forward_fused(x, delta);
  } else {
    for (auto& block : blocks) x = checkpoint ? checkpointed_forward(block.get(), x) : block(x);
  }
  {
    LLMPROF_SCOPE(Scope::kLnF, -1);
    x = delta.defined() ? ln_f->add_forward(x, delta).second : ln_f(x);
  }
  LLMPROF_SCOPE(Scope::kLmHead, -1);
  return torch::nn::functional::linear(x, wte->weight);  // tied lm_head: (B,T,C) -> (B,T,V)
}

KvCache GptImpl::make_cache(int64_t batch, int64_t max_len) const {
  if (batch < 1 || max_len < 1 || max_len > opt_.block_size) {
    throw std::invalid_argument("[gpt] make_cache: batch " + std::to_string(batch) +
                                " and max_len " + std::to_string(max_len) +
                                " must be >= 1, max_len <= block_size " +
                                std::to_string(opt_.block_size));
  }
  KvCache cache;
  cache.capacity = max_len;
  const int64_t hs = opt_.n_embd / opt_.n_head;
  const auto options = wte->weight.options().requires_grad(false);
  for (size_t i = 0; i < blocks.size(); ++i) {
    cache.k.push_back(torch::zeros({batch, opt_.n_head, max_len, hs}, options));
    cache.v.push_back(torch::zeros({batch, opt_.n_head, max_len, hs}, options));
  }
  return cache;
}

torch::Tensor GptImpl::forward_cached(const torch::Tensor& idx, KvCache& cache) {
  torch::NoGradGuard no_grad;
  const int64_t start = cache.length;
  if (idx.dim() != 2 || idx.size(1) < 1 || cache.k.size() != blocks.size() ||
      (!cache.k.empty() && idx.size(0) != cache.k[0].size(0))) {
    throw std::invalid_argument(
        "[gpt] forward_cached: idx " + c10::str(idx.sizes()) +
        " must be (B, t>=1) with B equal to the cache's batch, and the cache must come from "
        "make_cache of this model");
  }
  const int64_t t = idx.size(1);
  if (start + t > cache.capacity) {
    throw std::invalid_argument("[gpt] forward_cached: kv cache overflow: " + std::to_string(t) +
                                " tokens at position " + std::to_string(start) +
                                " exceed capacity " + std::to_string(cache.capacity));
  }
  torch::Tensor x;
  {
    LLMPROF_SCOPE(Scope::kEmbedding, -1);
    x = wte(idx) + wpe(positions.slice(0, start, start + t));  // (B,t,C) + (t,C)
    if (opt_.dropout > 0 && is_training()) {
      x = F::dropout(x, F::DropoutFuncOptions().p(opt_.dropout));
    }
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    x = blocks[i]->forward_cached(x, cache.k[i], cache.v[i], start);
  }
  cache.length = start + t;
  {
    LLMPROF_SCOPE(Scope::kLnF, -1);
    x = ln_f(x);
  }
  LLMPROF_SCOPE(Scope::kLmHead, -1);
  return torch::nn::functional::linear(x, wte->weight);  // (B,t,C) -> (B,t,V)
}

torch::Tensor GptImpl::generate(const torch::Tensor& prompt, int64_t new_tokens) {
  if (prompt.dim() != 2 || prompt.size(1) < 1 || new_tokens < 0 ||
      prompt.size(1) + new_tokens > opt_.block_size) {
    throw std::invalid_argument("[gpt] generate: prompt " + c10::str(prompt.sizes()) + " plus " +
                                std::to_string(new_tokens) + " new tokens must fit block_size " +
                                std::to_string(opt_.block_size));
  }
  torch::NoGradGuard no_grad;
  const int64_t B = prompt.size(0), t0 = prompt.size(1);
  torch::Tensor out = torch::empty({B, t0 + new_tokens}, prompt.options());
  out.narrow(1, 0, t0).copy_(prompt);
  if (new_tokens == 0) return out;
  KvCache cache = make_cache(B, t0 + new_tokens);
  torch::Tensor logits = forward_cached(prompt, cache);  // prefill
  for (int64_t i = 0; i < new_tokens; ++i) {
    torch::Tensor next = logits.select(1, logits.size(1) - 1).argmax(-1, /*keepdim=*/true);
    out.narrow(1, t0 + i, 1).copy_(next);  // (B,1)
    if (i + 1 < new_tokens) logits = forward_cached(next, cache);
  }
  return out;
}

torch::Tensor GptImpl::loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  LLMPROF_SCOPE(Scope::kLoss, -1);
  if (opt_.fused_loss) {
    return fused_cross_entropy(logits.view({-1, logits.size(-1)}), targets.view({-1}), -100);
  }
  return F::cross_entropy(logits.view({-1, logits.size(-1)}).to(torch::kFloat),
                          targets.view({-1}));
}

int64_t GptImpl::num_parameters() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();  // wte counted once: lm_head shares it
  return n;
}

}  // namespace llmprof::model
