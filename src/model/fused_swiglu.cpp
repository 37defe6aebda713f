#include "llmprof/model/fused_swiglu.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "fused_launch.h"
#include "fused_swiglu.h"
#include "llmprof/profile/bytes.h"

#ifdef LLMPROF_FUSED_SWIGLU_KERNELS
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace llmprof::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

#ifdef LLMPROF_FUSED_SWIGLU_KERNELS

std::optional<NormDtype> swiglu_dtype(const torch::Tensor& gate, const torch::Tensor& up) {
  if (!gate.is_cuda() || up.device() != gate.device() || up.scalar_type() != gate.scalar_type()) {
    return std::nullopt;
  }
  return kernel_dtype(gate.scalar_type());
}

#endif

// silu(gate) and silu'(gate) in fp32, the former rounded to gate's dtype (the LibTorch path).
std::pair<torch::Tensor, torch::Tensor> silu_and_slope(const torch::Tensor& gate) {
  const torch::Tensor g = gate.to(torch::kFloat);
  const torch::Tensor sig = torch::sigmoid(g);
  return {torch::silu(gate).to(torch::kFloat), sig * (1 + g * (1 - sig))};
}

}  // namespace

// Named outside an anonymous namespace: its node shows in ops.csv as
// torch::autograd::CppNode<llmprof::model::SwigluFunction>.
struct SwigluFunction : public torch::autograd::Function<SwigluFunction> {
  static torch::Tensor forward(AutogradContext* ctx,
                               const torch::Tensor& gate,
                               const torch::Tensor& up) {
    RECORD_FUNCTION(profile::kSwigluOp, std::vector<c10::IValue>({gate, up}));
    ctx->save_for_backward({gate, up});
#ifdef LLMPROF_FUSED_SWIGLU_KERNELS
    if (const auto dtype = swiglu_dtype(gate, up)) {
      const c10::cuda::CUDAGuard device_guard(gate.device());
      const torch::Tensor g = gate.contiguous(), u = up.contiguous();
      torch::Tensor out = torch::empty_like(g, torch::MemoryFormat::Contiguous);
      check_launch(launch_swiglu_forward(*dtype, g.data_ptr(), u.data_ptr(), out.data_ptr(),
                                         g.numel(), c10::cuda::getCurrentCUDAStream().stream()),
                   "swiglu", "forward");
      return out;
    }
#endif
    return torch::silu(gate) * up;  // LibTorch's ops, as LlamaMlpImpl unfused
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &gate = saved[0], &up = saved[1], &grad = grads[0];
    RECORD_FUNCTION(profile::kSwigluBackwardOp, std::vector<c10::IValue>({grad, gate, up}));
#ifdef LLMPROF_FUSED_SWIGLU_KERNELS
    if (const auto dtype = swiglu_dtype(gate, up)) {
      const c10::cuda::CUDAGuard device_guard(gate.device());
      const torch::Tensor g = gate.contiguous(), u = up.contiguous();
      const torch::Tensor dh = grad.to(gate.scalar_type()).contiguous();
      torch::Tensor dg = torch::empty_like(g), du = torch::empty_like(u);
      check_launch(launch_swiglu_backward(*dtype, dh.data_ptr(), g.data_ptr(), u.data_ptr(),
                                          dg.data_ptr(), du.data_ptr(), g.numel(),
                                          c10::cuda::getCurrentCUDAStream().stream()),
                   "swiglu", "backward");
      return {dg, du};
    }
#endif
    // grad_up = grad * silu(gate); grad_gate = (grad * up, in gate's dtype) * silu'(gate).
    const auto [s, slope] = silu_and_slope(gate);
    const torch::Tensor d_s = (grad * up).to(gate.scalar_type()).to(torch::kFloat);
    return {(d_s * slope).to(gate.scalar_type()),
            (grad.to(torch::kFloat) * s).to(up.scalar_type())};
  }
};

#ifdef LLMPROF_FUSED_SWIGLU_KERNELS
bool fused_swiglu_kernels_available() { return true; }
#else
bool fused_swiglu_kernels_available() { return false; }
#endif

torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up) {
  if (gate.sizes() != up.sizes()) {
    throw std::invalid_argument("[swiglu] gate " + c10::str(gate.sizes()) + " and up " +
                                c10::str(up.sizes()) + ": expected one shape");
  }
  return SwigluFunction::apply(gate, up);
}

}  // namespace llmprof::model
