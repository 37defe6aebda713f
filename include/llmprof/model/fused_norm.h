// model.fused_norm: a residual add and the norm after it as one op, after llm.c's fused residual
// + LayerNorm. Where the block computes h = residual + delta, then norm(h), this computes both at
// once and returns (h, norm(h)):
//   forward   one pass per row: h = residual + delta rounded to h's dtype and written, the row's
//             statistics in fp32 (mean and rstd for LayerNorm, rstd for RMSNorm), norm(h)
//             written; mean and rstd saved for the backward.
//   backward  one pass per row: the norm's input gradient with h's own gradient (the residual
//             stream's, from the layers above) added in the same pass, written once for both
//             addends; weight and bias gradients from per-block partial sums, then one
//             reduction over the blocks (a fixed order: the same bits every run).
// On a CUDA tensor in a build with the kernels (fused_add_norm.cu, the CUDA build) the passes
// are llmprof's kernels; elsewhere, and for dtypes or widths the kernels do not take, the same
// op runs as LibTorch ops with the same hand-written backward (the CPU tests check it against
// autograd of the unfused path). Both appear in ops.csv as llmprof::add_layer_norm /
// llmprof::add_rms_norm and their _backward, counted by llmprof/profile/bytes.h.
// Dtypes: h is the promotion of residual's and delta's (fp32 under autocast: an fp32 stream plus
// a bf16 layer output); LayerNorm's output has h's dtype, RMSNorm's is Hugging Face's
// weight * (h * rstd).to(h.dtype). The values equal the unfused path's up to fp32 rounding.
#pragma once

#include <utility>

namespace at {
class Tensor;
}

namespace llmprof::model {

// True when this build has the CUDA kernels (the CUDA build with a CUDA compiler); the LibTorch
// path runs otherwise.
bool fused_norm_kernels_available();

// residual, delta (..., C) of one shape; weight, bias (C) (bias undefined: none) ->
// (h = residual + delta, layer_norm(h, weight, bias, eps)), with autograd.
std::pair<at::Tensor, at::Tensor> add_layer_norm(const at::Tensor& residual,
                                                 const at::Tensor& delta,
                                                 const at::Tensor& weight,
                                                 const at::Tensor& bias,
                                                 double eps);

// residual, delta (..., C), weight (C) -> (h = residual + delta, weight * (h * rsqrt(mean(h^2) +
// eps)).to(h.dtype)) computed in fp32, with autograd.
std::pair<at::Tensor, at::Tensor> add_rms_norm(const at::Tensor& residual,
                                               const at::Tensor& delta,
                                               const at::Tensor& weight,
                                               double eps);

}  // namespace llmprof::model
