// The launchers of model.fused_swiglu's kernels (fused_swiglu.cu), torch-free: raw pointers on the
// given cudaStream_t; each returns nullptr or the CUDA error's text. The op and what it computes:
// llmprof/model/fused_swiglu.h. gate, up and every output: n contiguous elements of one dtype.
#pragma once

#include <cstdint>

#include "fused_add_norm.h"  // NormDtype

namespace llmprof::model {

// out = silu(gate) * up, silu(gate) rounded to the dtype first (as LibTorch's silu, then mul).
const char* launch_swiglu_forward(
    NormDtype dtype, const void* gate, const void* up, void* out, int64_t n, void* stream);

// With s = silu(gate) rounded as in the forward and silu'(g) = sig(g) * (1 + g * (1 - sig(g))):
//   grad_up = grad_out * s, grad_gate = (grad_out * up, rounded) * silu'(gate)
// (LibTorch's mul backward, then silu_backward, each rounding to the dtype).
const char* launch_swiglu_backward(NormDtype dtype,
                                   const void* grad_out,
                                   const void* gate,
                                   const void* up,
                                   void* grad_gate,
                                   void* grad_up,
                                   int64_t n,
                                   void* stream);

}  // namespace llmprof::model
