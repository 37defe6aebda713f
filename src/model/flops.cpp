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

}  // namespace llmprof::model
