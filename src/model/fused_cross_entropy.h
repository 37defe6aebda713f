// The launchers of model.fused_loss's kernels (fused_cross_entropy.cu), torch-free: raw pointers
// on the given cudaStream_t; each returns nullptr or the CUDA error's text. The loss itself and
// what it computes: llmprof/model/fused_loss.h.
#pragma once

#include <cstdint>

namespace llmprof::model {

// dtype of the logits and of grad_logits
enum class LogitsDtype { kFloat32, kBFloat16, kFloat16 };

// Per row: lse = log(sum(exp(logits))), row_loss = lse - logits[target] (0 for ignore_index).
const char* launch_cross_entropy_forward(LogitsDtype dtype, const void* logits,
                                         const int64_t* targets, int64_t rows, int64_t vocab,
                                         int64_t ignore_index, float* lse, float* row_loss,
                                         void* stream);

// grad_logits = (exp(logits - lse) - one_hot(target)) * *scale, where scale is a device pointer
// to grad_output / rows_counted (one float); zeros for ignore_index rows.
const char* launch_cross_entropy_backward(LogitsDtype dtype, const void* logits,
                                          const int64_t* targets, const float* lse,
                                          const float* scale, int64_t rows, int64_t vocab,
                                          int64_t ignore_index, void* grad_logits, void* stream);

}  // namespace llmprof::model
