#include "llmprof/model/linear.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <cmath>
#include <vector>

namespace llmprof::model {

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features, bool with_bias)
    : in_features_(in_features), out_features_(out_features) {
  // Registered exactly as torch::nn::Linear::reset() does, bias=false included (an undefined
  // parameter, skipped by parameters()).
  weight = register_parameter("weight", torch::empty({out_features, in_features}));
  if (with_bias) {
    bias = register_parameter("bias", torch::empty(out_features));
  } else {
    bias = register_parameter("bias", {}, /*requires_grad=*/false);
  }
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  // torch::nn::LinearImpl::reset_parameters: same calls, same order, same RNG draws.
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features_));
    torch::nn::init::uniform_(bias, -bound, bound);
  }
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "llmprof::model::Linear(in_features=" << in_features_
         << ", out_features=" << out_features_ << ", bias=" << (bias.defined() ? "true" : "false")
         << (packed.isNone() ? "" : ", int8") << ")";
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  if (packed.isNone()) return torch::linear(x, weight, bias);
  // quantized::linear_dynamic(Tensor X, LinearPackedParamsBase W_prepack, bool reduce_range)
  // -> Tensor Y: X quantized per call to uint8 from its min/max, int8 x uint8 -> int32, fp32 out.
  static const c10::OperatorHandle op =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_dynamic", "");
  std::vector<c10::IValue> stack{x.scalar_type() == torch::kFloat ? x : x.to(torch::kFloat), packed,
                                 reduce_range};
  op.callBoxed(&stack);
  return stack[0].toTensor();
}

}  // namespace llmprof::model
