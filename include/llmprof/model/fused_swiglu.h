// model.fused_swiglu: Llama's SwiGLU gate, h = silu(gate) * up, as one op. LibTorch runs silu,
// then mul, and keeps silu's output for the backward beside gate and up; this keeps gate and up
// only and computes
//   forward   h = silu(gate) * up in one pass (silu rounded to the dtype first, as LibTorch's)
//   backward  grad_up = grad_h * silu(gate), grad_gate = grad_h * up * silu'(gate), in one pass
// On CUDA tensors of one dtype (fp32, bf16, fp16) in a build with the kernels (fused_swiglu.cu,
// the CUDA build), llmprof's kernels; elsewhere the same op as LibTorch ops with the same
// hand-written backward. ops.csv: llmprof::swiglu and llmprof::swiglu_backward.
#pragma once

namespace at {
class Tensor;
}

namespace llmprof::model {

// True when this build has the CUDA kernels; the LibTorch path runs otherwise.
bool fused_swiglu_kernels_available();

// gate, up of one shape -> silu(gate) * up, with autograd.
at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up);

}  // namespace llmprof::model
