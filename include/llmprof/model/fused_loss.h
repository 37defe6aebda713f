// model.fused_loss: the classifier's cross-entropy as two llmprof CUDA kernels instead of
// LibTorch's fp32 cast, log_softmax, nll_loss and their backward (which write the logits three
// times over in fp32: ~10 ms of a 41 ms GPT-2 small step on an H100, measured in kernels.csv).
//   forward   one pass over each row of logits (its dtype: fp32, bf16 or fp16), an online
//             log-sum-exp in fp32; writes lse and lse - logit[target] per row (0 where the target
//             is ignore_index); the loss is their mean over the rows that count.
//   backward  (exp(logit - lse) - [j == target]) * grad / rows_counted, written straight in the
//             logits' dtype; zeros for ignored rows.
// The values are those of LibTorch's path on the same logits up to fp32 rounding (same fp32
// arithmetic, another summation order). The kernels (fused_cross_entropy.cu) build only in the
// CUDA build; elsewhere fused_cross_entropy_available() is false and config refuses the key.
#pragma once

#include <cstdint>

namespace at {
class Tensor;
}

namespace llmprof::model {

// True when this build has the kernels (the CUDA build with a CUDA compiler).
bool fused_cross_entropy_available();

// logits (N, V) on a CUDA device, targets (N) int64 -> the mean loss (0-d fp32), with autograd.
// Targets outside [0, V) other than ignore_index give NaN rows (visible, never silent).
at::Tensor fused_cross_entropy(const at::Tensor& logits, const at::Tensor& targets,
                               int64_t ignore_index);

}  // namespace llmprof::model
