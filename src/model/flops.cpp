#include "llmprof/model/flops.h"

namespace llmprof::model {

int64_t gpt_parameter_count(const GptShape& s) {
  const int64_t C = s.n_embd;
  int64_t per_layer = 12 * C * C + (s.bias ? 13 * C : 2 * C);
  int64_t ln_f = s.bias ? 2 * C : C;
  return s.vocab_size * C + s.block_size * C + s.n_layer * per_layer + ln_f;
}

namespace {
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

}  // namespace llmprof::model
