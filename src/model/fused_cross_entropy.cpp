#include "llmprof/model/fused_loss.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

#ifdef LLMPROF_FUSED_LOSS_KERNELS
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "fused_cross_entropy.h"
#include "fused_launch.h"
#endif

namespace llmprof::model {

#ifdef LLMPROF_FUSED_LOSS_KERNELS

namespace {

LogitsDtype logits_dtype(const torch::Tensor& logits) {
  switch (logits.scalar_type()) {
    case torch::kFloat:
      return LogitsDtype::kFloat32;
    case torch::kBFloat16:
      return LogitsDtype::kBFloat16;
    case torch::kHalf:
      return LogitsDtype::kFloat16;
    default:
      throw std::invalid_argument(std::string("[fused_cross_entropy] logits of dtype ") +
                                  c10::toString(logits.scalar_type()) +
                                  ": expected float32, bfloat16 or float16");
  }
}

}  // namespace

// Named outside an anonymous namespace: its backward node shows in ops.csv and kernels.csv as
// torch::autograd::CppNode<llmprof::model::FusedCrossEntropy>.
// Saved for backward: the logits in their own dtype (half the bytes of LibTorch's saved fp32
// log-probabilities at bf16), the targets, the per-row lse and the count of rows that count.
struct FusedCrossEntropy : public torch::autograd::Function<FusedCrossEntropy> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& logits,
                               const torch::Tensor& targets, int64_t ignore_index) {
    RECORD_FUNCTION("llmprof::fused_cross_entropy", std::vector<c10::IValue>({logits, targets}));
    const c10::cuda::CUDAGuard device_guard(logits.device());
    const int64_t rows = logits.size(0), vocab = logits.size(1);
    const auto f32 = logits.options().dtype(torch::kFloat);
    torch::Tensor lse = torch::empty({rows}, f32);
    torch::Tensor row_loss = torch::empty({rows}, f32);
    check_launch(launch_cross_entropy_forward(
                     logits_dtype(logits), logits.data_ptr(), targets.data_ptr<int64_t>(), rows,
                     vocab, ignore_index, lse.data_ptr<float>(), row_loss.data_ptr<float>(),
                     c10::cuda::getCurrentCUDAStream().stream()),
                 "fused_cross_entropy", "forward");
    // Mean over the rows that count, on the device (no host sync): 0/0 = NaN as LibTorch's.
    torch::Tensor counted = targets.ne(ignore_index).sum().to(torch::kFloat);
    ctx->save_for_backward({logits, targets, lse, counted});
    ctx->saved_data["ignore_index"] = ignore_index;
    return row_loss.sum() / counted;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &logits = saved[0], &targets = saved[1], &lse = saved[2],
                        &counted = saved[3];
    const int64_t ignore_index = ctx->saved_data["ignore_index"].toInt();
    const c10::cuda::CUDAGuard device_guard(logits.device());
    torch::Tensor scale = (grad_outputs[0].to(torch::kFloat) / counted).contiguous();
    torch::Tensor grad = torch::empty_like(logits, torch::MemoryFormat::Contiguous);
    check_launch(launch_cross_entropy_backward(
                     logits_dtype(logits), logits.data_ptr(), targets.data_ptr<int64_t>(),
                     lse.data_ptr<float>(), scale.data_ptr<float>(), logits.size(0), logits.size(1),
                     ignore_index, grad.data_ptr(), c10::cuda::getCurrentCUDAStream().stream()),
                 "fused_cross_entropy", "backward");
    return {grad, torch::Tensor(), torch::Tensor()};
  }
};

bool fused_cross_entropy_available() { return true; }

torch::Tensor fused_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                  int64_t ignore_index) {
  if (!logits.is_cuda() || logits.dim() != 2 || targets.dim() != 1 ||
      targets.size(0) != logits.size(0)) {
    throw std::invalid_argument("[fused_cross_entropy] expected CUDA logits (N, V) and targets "
                                "(N), got " +
                                c10::str(logits.sizes()) + " on " + logits.device().str() +
                                " and " + c10::str(targets.sizes()));
  }
  return FusedCrossEntropy::apply(logits.contiguous(),
                                  targets.to(logits.device(), torch::kLong).contiguous(),
                                  ignore_index);
}

#else  // a build without the CUDA kernels: config refuses model.fused_loss before this

bool fused_cross_entropy_available() { return false; }

torch::Tensor fused_cross_entropy(const torch::Tensor&, const torch::Tensor&, int64_t) {
  throw std::logic_error("[fused_cross_entropy] this llmprof was built without its CUDA kernels");
}

#endif

}  // namespace llmprof::model
