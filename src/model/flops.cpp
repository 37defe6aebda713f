#include "llmprof/model/flops.h"

namespace llmprof::model {

int64_t gpt_parameter_count(const GptShape& s) {
  const int64_t C = s.n_embd;
  int64_t per_layer = 12 * C * C + (s.bias ? 13 * C : 2 * C);
  int64_t ln_f = s.bias ? 2 * C : C;
  return s.vocab_size * C + s.block_size * C + s.n_layer * per_layer + ln_f;
}

namespace {
// Forward matmul FLOPs of one call of each block scope for B sequences of T tokens, width C and
// MLP width F (multiply-add = 2); -1 for scopes not modelled (norms, act, embedding, loss):
//   qkv 2*B*T*C*3C, scores and mix 2*B*T*T*C each (full T x T), proj 2*B*T*C*C,
//   mlp.up and mlp.down 2*B*T*C*F each.
profile::ScopeFlops block_scope_forward_flops(int64_t batch, int64_t seq,
                                                                  int64_t width, int64_t ffn) {
  using profile::Scope;
  profile::ScopeFlops f;
  f.fill(-1);
  const double b = static_cast<double>(batch), T = static_cast<double>(seq);
  const double C = static_cast<double>(width), F = static_cast<double>(ffn);
  auto at = [&](Scope sc) -> double& { return f[static_cast<int>(sc)]; };
  at(Scope::kAttnQkv) = 2 * b * T * C * 3 * C;
  at(Scope::kAttnScores) = 2 * b * T * T * C;
  at(Scope::kAttnMix) = 2 * b * T * T * C;
  at(Scope::kAttnCore) = at(Scope::kAttnScores) + at(Scope::kAttnMix);
  at(Scope::kAttnProj) = 2 * b * T * C * C;
  at(Scope::kAttn) = at(Scope::kAttnQkv) + at(Scope::kAttnCore) + at(Scope::kAttnProj);
  at(Scope::kMlpUp) = 2 * b * T * C * F;
  at(Scope::kMlpDown) = 2 * b * T * F * C;
  at(Scope::kMlp) = at(Scope::kMlpUp) + at(Scope::kMlpDown);
  at(Scope::kBlock) = at(Scope::kAttn) + at(Scope::kMlp);
  return f;
}

// Matmul FLOPs of the blocks for one sequence (see header).
double blocks_forward_flops(const GptShape& s) {
  const double C = static_cast<double>(s.n_embd), T = static_cast<double>(s.block_size);
  return static_cast<double>(s.n_layer) * (24.0 * T * C * C + 4.0 * T * T * C);
}
}  // namespace

double gpt_forward_flops_per_sequence(const GptShape& s) {
  const double C = static_cast<double>(s.n_embd), T = static_cast<double>(s.block_size);
  return blocks_forward_flops(s) + 2.0 * T * C * static_cast<double>(s.vocab_size);
}

double gpt_train_flops_per_step(const GptShape& s,
                                int64_t batch_size,
                                int64_t grad_accum_steps,
                                bool activation_checkpointing) {
  double sequences = static_cast<double>(batch_size * grad_accum_steps);
  double per_seq = 3.0 * gpt_forward_flops_per_sequence(s);
  if (activation_checkpointing) per_seq += blocks_forward_flops(s);
  return sequences * per_seq;
}

profile::ScopeFlops gpt_scope_forward_flops(const GptShape& s, int64_t B) {
  auto f = block_scope_forward_flops(B, s.block_size, s.n_embd, 4 * s.n_embd);
  const double b = static_cast<double>(B), T = static_cast<double>(s.block_size);
  f[static_cast<int>(profile::Scope::kLmHead)] =
      2 * b * T * static_cast<double>(s.n_embd) * static_cast<double>(s.vocab_size);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Encoder

int64_t encoder_parameter_count(const EncoderShape& s) {
  const int64_t C = s.n_embd, F = s.ffn_dim, V = s.vocab_size;
  const int64_t embeddings = V * C + s.max_positions * C + 2 * C;
  const int64_t per_layer = 4 * C * C + 2 * C * F + 9 * C + F;
  const int64_t head =
      s.mlm_predictions > 0 ? C * C + 3 * C + V : C * C + C + C * s.num_labels + s.num_labels;
  return embeddings + s.n_layer * per_layer + head;
}

namespace {
// Matmul FLOPs of the head for one sequence (see header).
double encoder_head_flops(const EncoderShape& s) {
  const double C = static_cast<double>(s.n_embd);
  if (s.mlm_predictions > 0) {
    const double P = static_cast<double>(s.mlm_predictions);
    return 2.0 * P * C * C + 2.0 * P * C * static_cast<double>(s.vocab_size);
  }
  return 2.0 * C * C + 2.0 * C * static_cast<double>(s.num_labels);
}
}  // namespace

double encoder_forward_flops_per_sequence(const EncoderShape& s) {
  const double C = static_cast<double>(s.n_embd), T = static_cast<double>(s.block_size);
  const double F = static_cast<double>(s.ffn_dim);
  const double per_layer =
      2.0 * T * C * 3.0 * C + 2.0 * T * C * C + 2.0 * T * C * F * 2.0 + 4.0 * T * T * C;
  return static_cast<double>(s.n_layer) * per_layer + encoder_head_flops(s);
}

double encoder_train_flops_per_step(const EncoderShape& s,
                                    int64_t batch_size,
                                    int64_t grad_accum_steps) {
  return static_cast<double>(batch_size * grad_accum_steps) * 3.0 *
         encoder_forward_flops_per_sequence(s);
}

profile::ScopeFlops encoder_scope_forward_flops(const EncoderShape& s,
                                                                    int64_t B) {
  auto f = block_scope_forward_flops(B, s.block_size, s.n_embd, s.ffn_dim);
  f[static_cast<int>(profile::Scope::kLmHead)] = static_cast<double>(B) * encoder_head_flops(s);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Llama

int64_t llama_parameter_count(const LlamaShape& s) {
  const int64_t C = s.n_embd, hd = s.head_dim, nh = s.n_head, nkv = s.n_kv_head;
  const int64_t attn = C * nh * hd + 2 * C * nkv * hd + nh * hd * C +
                       (s.attention_bias ? (nh + 2 * nkv) * hd : 0);
  const int64_t per_layer = attn + 3 * C * s.intermediate_size + 2 * C;
  const int64_t head = s.tie_embeddings ? 0 : s.vocab_size * C;
  return s.vocab_size * C + s.n_layer * per_layer + C + head;
}

namespace {
// Forward matmul FLOPs of one call of each llama block scope for b sequences of T tokens.
profile::ScopeFlops llama_block_scope_flops(const LlamaShape& s, int64_t batch) {
  using profile::Scope;
  profile::ScopeFlops f;
  f.fill(-1);
  const double b = static_cast<double>(batch), T = static_cast<double>(s.block_size);
  const double C = static_cast<double>(s.n_embd), F = static_cast<double>(s.intermediate_size);
  const double q_width = static_cast<double>(s.n_head * s.head_dim);
  const double kv_width = static_cast<double>(s.n_kv_head * s.head_dim);
  auto at = [&](Scope sc) -> double& { return f[static_cast<int>(sc)]; };
  at(Scope::kAttnQ) = 2 * b * T * C * q_width;
  at(Scope::kAttnK) = 2 * b * T * C * kv_width;
  at(Scope::kAttnV) = 2 * b * T * C * kv_width;
  at(Scope::kAttnScores) = 2 * b * T * T * q_width;
  at(Scope::kAttnMix) = 2 * b * T * T * q_width;
  at(Scope::kAttnCore) = at(Scope::kAttnScores) + at(Scope::kAttnMix);
  at(Scope::kAttnO) = 2 * b * T * q_width * C;
  at(Scope::kAttn) = at(Scope::kAttnQ) + at(Scope::kAttnK) + at(Scope::kAttnV) +
                     at(Scope::kAttnCore) + at(Scope::kAttnO);
  at(Scope::kMlpGate) = 2 * b * T * C * F;
  at(Scope::kMlpUp) = 2 * b * T * C * F;
  at(Scope::kMlpDown) = 2 * b * T * F * C;
  at(Scope::kMlp) = at(Scope::kMlpGate) + at(Scope::kMlpUp) + at(Scope::kMlpDown);
  at(Scope::kBlock) = at(Scope::kAttn) + at(Scope::kMlp);
  return f;
}

double llama_blocks_forward_flops(const LlamaShape& s) {
  return static_cast<double>(s.n_layer) *
         llama_block_scope_flops(s, 1)[static_cast<int>(profile::Scope::kBlock)];
}
}  // namespace

double llama_forward_flops_per_sequence(const LlamaShape& s) {
  return llama_blocks_forward_flops(s) + 2.0 * static_cast<double>(s.block_size) *
                                             static_cast<double>(s.n_embd) *
                                             static_cast<double>(s.vocab_size);
}

double llama_train_flops_per_step(const LlamaShape& s,
                                  int64_t batch_size,
                                  int64_t grad_accum_steps,
                                  bool activation_checkpointing) {
  double per_seq = 3.0 * llama_forward_flops_per_sequence(s);
  if (activation_checkpointing) per_seq += llama_blocks_forward_flops(s);
  return static_cast<double>(batch_size * grad_accum_steps) * per_seq;
}

profile::ScopeFlops llama_scope_forward_flops(const LlamaShape& s, int64_t B) {
  profile::ScopeFlops f = llama_block_scope_flops(s, B);
  f[static_cast<int>(profile::Scope::kLmHead)] =
      2.0 * static_cast<double>(B) * static_cast<double>(s.block_size) *
      static_cast<double>(s.n_embd) * static_cast<double>(s.vocab_size);
  return f;
}

GqaSavings llama_gqa_savings(const LlamaShape& s, int64_t elem_bytes) {
  LlamaShape mha = s;
  mha.n_kv_head = s.n_head;
  const double T = static_cast<double>(s.block_size);
  auto attention_per_token = [&](const LlamaShape& x) {
    const profile::ScopeFlops f = llama_block_scope_flops(x, 1);
    return static_cast<double>(x.n_layer) * f[static_cast<int>(profile::Scope::kAttn)] / T;
  };
  auto kv_proj_per_token = [&](const LlamaShape& x) {
    return static_cast<double>(x.n_layer) * 2.0 * 2.0 * static_cast<double>(x.n_embd) *
           static_cast<double>(x.n_kv_head * x.head_dim);
  };
  GqaSavings g{};
  g.kv_bytes_per_token = s.n_layer * 2 * s.n_kv_head * s.head_dim * elem_bytes;
  g.mha_kv_bytes_per_token = s.n_layer * 2 * s.n_head * s.head_dim * elem_bytes;
  g.kv_proj_flops_per_token = kv_proj_per_token(s);
  g.mha_kv_proj_flops_per_token = kv_proj_per_token(mha);
  g.attention_flops_per_token = attention_per_token(s);
  g.mha_attention_flops_per_token = attention_per_token(mha);
  return g;
}

}  // namespace llmprof::model
