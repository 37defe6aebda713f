#include "llmprof/model/distilbert.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "llmprof/model/fused_loss.h"
#include "llmprof/model/fused_norm.h"
#include "llmprof/profile/scope.h"

namespace llmprof::model {

namespace F = torch::nn::functional;
using profile::Scope;

namespace {

constexpr double kLayerNormEps = 1e-12;  // HF DistilBERT's LayerNorm eps
constexpr int64_t kIgnoreIndex = -100;   // labels skipped by the loss (HF, torch default)

torch::nn::LayerNorm layer_norm(int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(kLayerNormEps));
}

// LayerNorm in the weight's dtype: LibTorch 1.13's CPU autocast leaves layer_norm alone, and a bf16
// input with fp32 weights is an error there (2.x autocasts layer_norm to fp32, as this does).
torch::Tensor apply_norm(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  const auto dtype = norm->weight.scalar_type();
  return norm(x.scalar_type() == dtype ? x : x.to(dtype));
}

// model.fused_norm: norm(residual + delta) as one op; the sum itself is not kept (post-LN).
torch::Tensor add_then_norm(torch::nn::LayerNorm& norm,
                            const torch::Tensor& residual,
                            const torch::Tensor& delta) {
  return add_layer_norm(residual, delta, norm->weight, norm->bias, norm->options.eps()).second;
}

// torch.finfo(dtype).min, as HF fills masked scores: finite, so a row whose keys are all padding
// softmaxes to a uniform row instead of NaN, while next to any real score its weight is exactly 0.
double lowest(torch::ScalarType t) {
  switch (t) {
    case torch::kDouble:
      return std::numeric_limits<double>::lowest();
    case torch::kBFloat16:
      return static_cast<float>(std::numeric_limits<c10::BFloat16>::lowest());
    case torch::kHalf:
      return static_cast<float>(std::numeric_limits<c10::Half>::lowest());
    default:
      return std::numeric_limits<float>::lowest();
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Attention

EncoderAttentionImpl::EncoderAttentionImpl(const DistilBertOptions& opt, int16_t layer)
    : n_head_(opt.n_head), dim_(opt.dim), attention_dropout_(opt.attention_dropout), layer_(layer) {
  if (opt.n_head < 1 || opt.dim % opt.n_head != 0) {
    throw std::invalid_argument("[distilbert] dim " + std::to_string(opt.dim) +
                                " must be a multiple of n_head " + std::to_string(opt.n_head));
  }
  qkv_lin = register_module("qkv_lin", Linear(opt.dim, 3 * opt.dim));  // [q_lin; k_lin; v_lin]
  out_lin = register_module("out_lin", Linear(opt.dim, opt.dim));
}

torch::Tensor EncoderAttentionImpl::qkv(const torch::Tensor& x) {
  LLMPROF_SCOPE(Scope::kAttnQkv, layer_);
  return qkv_lin(x);
}

torch::Tensor EncoderAttentionImpl::scores(const torch::Tensor& q,
                                           const torch::Tensor& k,
                                           const torch::Tensor& key_pad) {
  // (B,nh,T,hs) x (B,nh,hs,T) -> (B,nh,T,T) / sqrt(hs); HF scales q first, the same product.
  LLMPROF_SCOPE(Scope::kAttnScores, layer_);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)).mul_(scale);
  if (key_pad.defined()) att.masked_fill_(key_pad, lowest(att.scalar_type()));  // (B,1,1,T)
  return att;
}

torch::Tensor EncoderAttentionImpl::softmax(const torch::Tensor& att) {
  LLMPROF_SCOPE(Scope::kAttnSoftmax, layer_);
  torch::Tensor p = torch::softmax(att, -1);
  if (attention_dropout_ > 0 && is_training()) {
    p = F::dropout(p, F::DropoutFuncOptions().p(attention_dropout_));
  }
  return p;
}

torch::Tensor EncoderAttentionImpl::mix(const torch::Tensor& att, const torch::Tensor& v) {
  // (B,nh,T,T) x (B,nh,T,hs) -> (B,nh,T,hs) -> (B,T,nh,hs) -> (B,T,C)
  LLMPROF_SCOPE(Scope::kAttnMix, layer_);
  torch::Tensor y = torch::matmul(att, v);
  return y.transpose(1, 2).contiguous().view({y.size(0), y.size(2), dim_});
}

torch::Tensor EncoderAttentionImpl::proj(const torch::Tensor& y) {
  LLMPROF_SCOPE(Scope::kAttnProj, layer_);
  return out_lin(y);  // HF applies no dropout here
}

torch::Tensor EncoderAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& key_pad) {
  LLMPROF_SCOPE(Scope::kAttn, layer_);
  const int64_t B = x.size(0), T = x.size(1), hs = dim_ / n_head_;
  auto parts = qkv(x).split(dim_, 2);  // 3 x (B,T,C)
  auto heads = [&](const torch::Tensor& t) { return t.view({B, T, n_head_, hs}).transpose(1, 2); };
  torch::Tensor y;
  {
    LLMPROF_SCOPE(Scope::kAttnCore, layer_);  // scores + mask + softmax + weighted sum
    torch::Tensor att = softmax(scores(heads(parts[0]), heads(parts[1]), key_pad));
    y = mix(att, heads(parts[2]));
  }
  return proj(y);
}

// ---------------------------------------------------------------------------------------------
// FFN

EncoderFfnImpl::EncoderFfnImpl(const DistilBertOptions& opt, int16_t layer)
    : dropout_(opt.dropout), layer_(layer) {
  lin1 = register_module("lin1", Linear(opt.dim, opt.hidden_dim));
  lin2 = register_module("lin2", Linear(opt.hidden_dim, opt.dim));
}

torch::Tensor EncoderFfnImpl::up(const torch::Tensor& x) {
  LLMPROF_SCOPE(Scope::kMlpUp, layer_);
  return lin1(x);
}
torch::Tensor EncoderFfnImpl::act(const torch::Tensor& h) {
  LLMPROF_SCOPE(Scope::kMlpAct, layer_);
  return torch::gelu(h);  // exact (erf) GELU, HF activation="gelu"
}
torch::Tensor EncoderFfnImpl::down(const torch::Tensor& h) {
  LLMPROF_SCOPE(Scope::kMlpDown, layer_);
  torch::Tensor out = lin2(h);
  if (dropout_ > 0 && is_training()) out = F::dropout(out, F::DropoutFuncOptions().p(dropout_));
  return out;
}
torch::Tensor EncoderFfnImpl::forward(const torch::Tensor& x) {
  LLMPROF_SCOPE(Scope::kMlp, layer_);
  return down(act(up(x)));
}

// ---------------------------------------------------------------------------------------------
// Block

EncoderBlockImpl::EncoderBlockImpl(const DistilBertOptions& opt, int16_t layer)
    : layer_(layer), fused_norm_(opt.fused_norm) {
  attention = register_module("attention", EncoderAttention(opt, layer));
  sa_layer_norm = register_module("sa_layer_norm", layer_norm(opt.dim));
  ffn = register_module("ffn", EncoderFfn(opt, layer));
  output_layer_norm = register_module("output_layer_norm", layer_norm(opt.dim));
}

torch::Tensor EncoderBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& key_pad) {
  LLMPROF_SCOPE(Scope::kBlock, layer_);
  if (fused_norm_) {  // each add fused into the norm after it: counted to ln_1 and ln_2 here
    const torch::Tensor a = attention(x, key_pad);
    torch::Tensor sa;
    {
      LLMPROF_SCOPE(Scope::kLn1, layer_);
      sa = add_then_norm(sa_layer_norm, x, a);
    }
    const torch::Tensor f = ffn(sa);
    LLMPROF_SCOPE(Scope::kLn2, layer_);
    return add_then_norm(output_layer_norm, sa, f);
  }
  torch::Tensor h = attention(x, key_pad) + x;  // the residual adds count to the block's self time
  torch::Tensor sa;
  {
    LLMPROF_SCOPE(Scope::kLn1, layer_);
    sa = apply_norm(sa_layer_norm, h);
  }
  h = ffn(sa) + sa;
  LLMPROF_SCOPE(Scope::kLn2, layer_);
  return apply_norm(output_layer_norm, h);
}

// ---------------------------------------------------------------------------------------------
// DistilBERT

DistilBertImpl::DistilBertImpl(const DistilBertOptions& opt) : opt_(opt) {
  word_embeddings =
      register_module("word_embeddings", torch::nn::Embedding(opt.vocab_size, opt.dim));
  position_embeddings =
      register_module("position_embeddings", torch::nn::Embedding(opt.max_positions, opt.dim));
  emb_layer_norm = register_module("emb_layer_norm", layer_norm(opt.dim));
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < opt.n_layer; ++i) {
    blocks.push_back(EncoderBlock(opt, static_cast<int16_t>(i)));
    layers->push_back(blocks.back());
  }
  if (opt.head == EncoderHead::kMaskedLm) {
    vocab_transform = register_module("vocab_transform", Linear(opt.dim, opt.dim));
    vocab_layer_norm = register_module("vocab_layer_norm", layer_norm(opt.dim));
    vocab_projector_bias =
        register_parameter("vocab_projector_bias", torch::zeros({opt.vocab_size}));
  } else {
    pre_classifier = register_module("pre_classifier", Linear(opt.dim, opt.dim));
    classifier = register_module("classifier", Linear(opt.dim, opt.num_labels));
  }
  positions = register_buffer("positions", torch::arange(opt.max_positions, torch::kLong));
  init_weights();
}

void DistilBertImpl::init_weights() {
  // HF DistilBertPreTrainedModel._init_weights: N(0, initializer_range = 0.02) for Linear and
  // Embedding weights, zero biases, LayerNorm weight 1 and bias 0 (already so from construction).
  // (HF also zeroes the pad_token_id row of word_embeddings; no pad id is known here.)
  torch::NoGradGuard no_grad;
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* lin = module->as<Linear>()) {
      lin->weight.normal_(0.0, 0.02);
      if (lin->bias.defined()) lin->bias.zero_();
    } else if (auto* emb = module->as<torch::nn::Embedding>()) {
      emb->weight.normal_(0.0, 0.02);
    }
  }
  if (vocab_projector_bias.defined()) vocab_projector_bias.zero_();
}

torch::Tensor DistilBertImpl::encode(const torch::Tensor& ids, const torch::Tensor& mask) {
  if (ids.dim() != 2 || ids.size(1) > opt_.max_positions ||
      (mask.defined() && mask.sizes() != ids.sizes())) {
    throw std::invalid_argument("[distilbert] encode: ids " + c10::str(ids.sizes()) +
                                " must be (B, T) with T <= max_positions " +
                                std::to_string(opt_.max_positions) + ", mask the same shape");
  }
  const int64_t B = ids.size(0), T = ids.size(1);
  torch::Tensor x;
  {
    LLMPROF_SCOPE(Scope::kEmbedding, -1);
    x = word_embeddings(ids) + position_embeddings(positions.slice(0, 0, T));  // (B,T,C) + (T,C)
    x = apply_norm(emb_layer_norm, x);
    if (opt_.dropout > 0 && is_training()) {
      x = F::dropout(x, F::DropoutFuncOptions().p(opt_.dropout));
    }
  }
  // (B,1,1,T): true where the key is padding, broadcast over heads and queries.
  torch::Tensor key_pad;
  if (mask.defined()) key_pad = mask.eq(0).reshape({B, 1, 1, T});
  for (auto& block : blocks) x = block(x, key_pad);
  return x;
}

torch::Tensor DistilBertImpl::mlm_logits(const torch::Tensor& hidden, const torch::Tensor& pos) {
  if (opt_.head != EncoderHead::kMaskedLm) {
    throw std::invalid_argument(
        "[distilbert] mlm_logits: the model was built with the "
        "classification head");
  }
  LLMPROF_SCOPE(Scope::kLmHead, -1);
  const int64_t B = pos.size(0), P = pos.size(1), C = hidden.size(2);
  torch::Tensor h = hidden.gather(1, pos.unsqueeze(-1).expand({B, P, C}));  // (B,P,C)
  h = apply_norm(vocab_layer_norm, torch::gelu(vocab_transform(h)));
  return F::linear(h, word_embeddings->weight, vocab_projector_bias);  // tied: (B,P,C) -> (B,P,V)
}

torch::Tensor DistilBertImpl::classify_logits(const torch::Tensor& hidden) {
  if (opt_.head != EncoderHead::kClassify) {
    throw std::invalid_argument(
        "[distilbert] classify_logits: the model was built with the "
        "masked-LM head");
  }
  LLMPROF_SCOPE(Scope::kLmHead, -1);
  torch::Tensor h = torch::relu(pre_classifier(hidden.select(1, 0)));  // [CLS]: (B,C)
  if (opt_.classifier_dropout > 0 && is_training()) {
    h = F::dropout(h, F::DropoutFuncOptions().p(opt_.classifier_dropout));
  }
  return classifier(h);  // (B, num_labels)
}

torch::Tensor DistilBertImpl::loss(const torch::Tensor& logits, const torch::Tensor& labels) {
  LLMPROF_SCOPE(Scope::kLoss, -1);
  if (opt_.fused_loss) {
    return fused_cross_entropy(logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}),
                               kIgnoreIndex);
  }
  return F::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat),
                          labels.reshape({-1}),
                          F::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex));
}

int64_t DistilBertImpl::num_parameters() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();  // the projector reuses word_embeddings
  return n;
}

}  // namespace llmprof::model
