// A DistilBERT-style encoder (Hugging Face modeling_distilbert.py) in LibTorch: word + learned
// position embeddings, embedding LayerNorm and dropout; n_layer post-LN blocks of bidirectional
// multi-head self-attention with a padding mask and a GELU FFN; two heads:
// - masked LM: vocab_transform (C -> C), GELU, vocab_layer_norm, vocab_projector tied to the word
//   embeddings (+ its own bias), evaluated only at the P selected positions (B, P) of each row;
// - sequence classification: pre_classifier (C -> C) + ReLU + dropout + classifier (C -> labels)
//   on the [CLS] (first) position.
// Sub-steps carry the same profiling scopes as the decoder (attn.qkv / attn.core / attn.proj,
// mlp.up / mlp.act / mlp.down; ln_1 = sa_layer_norm, ln_2 = output_layer_norm, lm_head = the head).
// One fused qkv_lin (C -> 3C) stands for HF's q_lin, k_lin, v_lin: its weight is their weights
// concatenated along the output dimension [q; k; v] (biases likewise), the same function and
// FLOPs in one matmul, as the decoder's c_attn, so attn.qkv times alike in both models.
// Shapes: B batch, T sequence, C = dim, nh heads, hs = C / nh, F = hidden_dim, V vocabulary.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "llmprof/model/linear.h"

namespace llmprof::model {

enum class EncoderHead { kMaskedLm, kClassify };

// Defaults are distilbert-base-uncased's.
struct DistilBertOptions {
  int64_t n_layer = 6;
  int64_t n_head = 12;
  int64_t dim = 768;
  int64_t hidden_dim = 3072;  // FFN width F
  int64_t vocab_size = 30522;
  int64_t max_positions = 512;      // rows of the position embedding; >= T
  double dropout = 0.1;             // embeddings and FFN output (HF: none on the attention output)
  double attention_dropout = 0.1;   // on the attention probabilities
  double classifier_dropout = 0.2;  // seq_classif_dropout
  int64_t num_labels = 2;
  EncoderHead head = EncoderHead::kMaskedLm;
  bool fused_loss = false;  // loss() through llmprof's CUDA cross-entropy kernels
  bool fused_norm = false;  // each residual add fused into the LayerNorm after it (fused_norm.h)
};

// HF MultiHeadSelfAttention. key_pad (B, 1, 1, T) bool, true = padded key (or undefined).
class EncoderAttentionImpl : public torch::nn::Module {
 public:
  EncoderAttentionImpl(const DistilBertOptions& opt, int16_t layer);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& key_pad);  // (B,T,C)

  // The sub-steps, in order.
  torch::Tensor qkv(const torch::Tensor& x);  // (B,T,C) -> (B,T,3C)
  // q, k (B,nh,T,hs) -> (B,nh,T,T) scaled by 1/sqrt(hs), padded keys at the dtype's lowest value.
  torch::Tensor scores(const torch::Tensor& q,
                       const torch::Tensor& k,
                       const torch::Tensor& key_pad);
  torch::Tensor softmax(const torch::Tensor& att);                      // + attention dropout
  torch::Tensor mix(const torch::Tensor& att, const torch::Tensor& v);  // -> (B,T,C)
  torch::Tensor proj(const torch::Tensor& y);                           // out_lin

  Linear qkv_lin{nullptr}, out_lin{nullptr};
  int64_t n_head_, dim_;
  double attention_dropout_;
  int16_t layer_;
};
TORCH_MODULE(EncoderAttention);

// HF FFN: lin1 (C -> F), exact GELU, lin2 (F -> C), dropout.
class EncoderFfnImpl : public torch::nn::Module {
 public:
  EncoderFfnImpl(const DistilBertOptions& opt, int16_t layer);
  torch::Tensor forward(const torch::Tensor& x);  // (B,T,C) -> (B,T,C)

  torch::Tensor up(const torch::Tensor& x);    // (B,T,C) -> (B,T,F)
  torch::Tensor act(const torch::Tensor& h);   // GELU
  torch::Tensor down(const torch::Tensor& h);  // (B,T,F) -> (B,T,C), then dropout

  Linear lin1{nullptr}, lin2{nullptr};
  double dropout_;
  int16_t layer_;
};
TORCH_MODULE(EncoderFfn);

// HF TransformerBlock, post-LN: sa = sa_layer_norm(attn(x) + x); out = output_layer_norm(ffn(sa) +
// sa). With model.fused_norm each add and the norm after it are one op (the sum is used by the
// norm alone: post-LN's stream is the norm's output).
class EncoderBlockImpl : public torch::nn::Module {
 public:
  EncoderBlockImpl(const DistilBertOptions& opt, int16_t layer);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& key_pad);  // (B,T,C)

  EncoderAttention attention{nullptr};
  torch::nn::LayerNorm sa_layer_norm{nullptr};
  EncoderFfn ffn{nullptr};
  torch::nn::LayerNorm output_layer_norm{nullptr};
  int16_t layer_;
  bool fused_norm_;
};
TORCH_MODULE(EncoderBlock);

class DistilBertImpl : public torch::nn::Module {
 public:
  explicit DistilBertImpl(const DistilBertOptions& opt);

  // ids (B, T) int64, mask (B, T) int64/bool, 1 = real token (undefined = no padding) -> hidden
  // states (B, T, C). Padded keys get the lowest finite score, so their softmax weight is exactly
  // 0 and they never change real positions' outputs (a row of only padding stays finite).
  torch::Tensor encode(const torch::Tensor& ids, const torch::Tensor& mask);
  // Masked-LM logits at pos (B, P) int64 -> (B, P, V). Head kMaskedLm only.
  torch::Tensor mlm_logits(const torch::Tensor& hidden, const torch::Tensor& pos);
  // Classification logits from hidden[:, 0] -> (B, num_labels). Head kClassify only.
  torch::Tensor classify_logits(const torch::Tensor& hidden);
  // Mean cross-entropy over entries whose label is not -100: logits (..., K), labels (...).
  // NaN when every label is -100 (no entry to average).
  torch::Tensor loss(const torch::Tensor& logits, const torch::Tensor& labels);

  // Parameters counted once (the tied projector weight is the word embedding).
  int64_t num_parameters() const;
  const DistilBertOptions& options() const { return opt_; }

  // Parameter names: word_embeddings, position_embeddings, emb_layer_norm (HF embeddings.*),
  // layers.<i>.{attention.{qkv_lin,out_lin}, sa_layer_norm, ffn.{lin1,lin2}, output_layer_norm}
  // (HF transformer.layer.<i>.*), then the head: vocab_transform, vocab_layer_norm,
  // vocab_projector_bias | pre_classifier, classifier.
  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr};
  torch::nn::LayerNorm emb_layer_norm{nullptr};
  torch::nn::ModuleList layers{nullptr};  // registered holder of `blocks`
  std::vector<EncoderBlock> blocks;       // the same modules, typed
  // kMaskedLm
  Linear vocab_transform{nullptr};
  torch::nn::LayerNorm vocab_layer_norm{nullptr};
  torch::Tensor vocab_projector_bias;  // (V,)
  // kClassify
  Linear pre_classifier{nullptr}, classifier{nullptr};
  torch::Tensor positions;  // (max_positions,) 0..max-1, preallocated

 private:
  void init_weights();  // normal(0, 0.02) Linear/Embedding weights, zero biases, LayerNorm 1/0 (HF)
  DistilBertOptions opt_;
};
TORCH_MODULE(DistilBert);

}  // namespace llmprof::model
