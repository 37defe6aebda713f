// The launchers of model.fused_norm's kernels (fused_add_norm.cu), torch-free: raw pointers on
// the given cudaStream_t; each returns nullptr or the CUDA error's text. The op itself and what
// it computes: llmprof/model/fused_norm.h. Every tensor is row-major and contiguous: rows x width.
#pragma once

#include <cstdint>

namespace llmprof::model {

enum class NormDtype { kFloat32, kBFloat16, kFloat16 };

// The widest row the kernels take: the backward keeps a block's weight and bias gradients of one
// row in shared memory (2 x width fp32: 128 KiB at 16384). Wider rows take the LibTorch path.
constexpr int64_t kAddNormMaxWidth = 16384;

// The dtypes the kernels take: sum (the residual's dtype, the wider of the two addends) fp32
// with a delta of any of the three and an fp32 weight; or sum and delta both bf16 (or both
// fp16) with an fp32 weight or one of their dtype. Anything else takes the LibTorch path.
inline bool add_norm_dtypes_supported(NormDtype sum, NormDtype delta, NormDtype weight) {
  if (sum == NormDtype::kFloat32) return weight == NormDtype::kFloat32;
  return delta == sum && (weight == NormDtype::kFloat32 || weight == sum);
}

// The norm's output dtype: LayerNorm writes the sum's; RMSNorm (Hugging Face's
// weight * x_normed.to(x.dtype)) the promotion of the sum's and the weight's.
inline NormDtype add_norm_out_dtype(bool rms, NormDtype sum, NormDtype weight) {
  return rms && weight == NormDtype::kFloat32 ? NormDtype::kFloat32 : sum;
}

struct AddNormForward {
  bool rms = false;  // RMSNorm (no mean, no bias) instead of LayerNorm
  NormDtype sum_dtype = NormDtype::kFloat32, delta_dtype = NormDtype::kFloat32,
            weight_dtype = NormDtype::kFloat32;
  const void* residual = nullptr;  // (rows, width), sum_dtype
  const void* delta = nullptr;     // (rows, width), delta_dtype
  const void* weight = nullptr;    // (width), weight_dtype
  const void* bias = nullptr;      // (width), weight_dtype, or null (none; always null for RMS)
  void* sum = nullptr;             // out (rows, width): residual + delta, sum_dtype
  void* norm = nullptr;            // out (rows, width), add_norm_out_dtype
  float* mean = nullptr;           // out (rows): LayerNorm only
  float* rstd = nullptr;           // out (rows): 1 / sqrt(var + eps), or 1 / sqrt(mean(x^2) + eps)
  int64_t rows = 0, width = 0;
  float eps = 1e-5f;
};

// sum = residual + delta (rounded to sum_dtype), then norm = LayerNorm(sum) or RMSNorm(sum), the
// statistics in fp32: one warp per row.
const char* launch_add_norm_forward(const AddNormForward& a, void* stream);

struct AddNormBackward {
  bool rms = false;
  NormDtype sum_dtype = NormDtype::kFloat32, delta_dtype = NormDtype::kFloat32,
            weight_dtype = NormDtype::kFloat32;
  const void* grad_norm = nullptr;  // (rows, width), add_norm_out_dtype
  const void* grad_sum = nullptr;   // (rows, width), sum_dtype: the sum's own gradient, or null
  const void* sum = nullptr;        // the forward's sum
  const void* weight = nullptr;
  const float* mean = nullptr;  // LayerNorm only
  const float* rstd = nullptr;
  void* grad_input = nullptr;   // out (rows, width), sum_dtype: d(sum), the residual's gradient
  void* grad_delta = nullptr;   // out (rows, width), delta_dtype, or null (delta's = grad_input)
  float* partial = nullptr;     // scratch: 2 x add_norm_backward_blocks() x width floats
  void* grad_weight = nullptr;  // out (width), weight_dtype
  void* grad_bias = nullptr;    // out (width), weight_dtype, or null (no bias)
  int64_t rows = 0, width = 0;
};

// Blocks of the backward on the current device for rows rows (each block owns a slice of
// `partial`); 0 when the device cannot be queried.
int64_t add_norm_backward_blocks(int64_t rows);

// One block per row (blocks loop over rows), then one pass over the blocks' partial sums:
//   LayerNorm  xhat = (x - mean) * rstd, g = grad_norm * weight,
//              dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) + grad_sum,
//              dweight = sum over rows of grad_norm * xhat, dbias = sum of grad_norm
//   RMSNorm    xhat = x * rstd, g = grad_norm * weight, dx = rstd * (g - xhat * mean(g * xhat))
//              + grad_sum, dweight = sum over rows of grad_norm * xhat (xhat rounded to the sum's
//              dtype, as the forward multiplied it)
// with `blocks` = add_norm_backward_blocks(rows).
const char* launch_add_norm_backward(const AddNormBackward& a, int64_t blocks, void* stream);

}  // namespace llmprof::model
