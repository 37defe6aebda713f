// A Linear layer that can run as fp32/bf16 (torch::linear) or as int8 dynamic quantization
// (quantized::linear_dynamic on a prepacked weight), switched per model after training. Its
// parameters are named weight and bias, as torch::nn::Linear's, so checkpoints are the same, and
// its constructor draws the same random numbers in the same order (kaiming_uniform a = sqrt(5),
// bias U(-1/sqrt(in), 1/sqrt(in))), so swapping it for torch::nn::Linear leaves RNG streams alone.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <ostream>

namespace llmprof::model {

class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
  // x (..., in) -> (..., out). Uses the prepacked int8 weight when quantized (inference only:
  // quantized::linear_dynamic has no backward; x must be fp32).
  torch::Tensor forward(const torch::Tensor& x);
  // torch::nn::Linear's init, redrawn from the default generator.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  bool quantized() const { return !packed.isNone(); }

  torch::Tensor weight;       // (out, in)
  torch::Tensor bias;         // (out,) or undefined
  c10::IValue packed;         // quantized::linear_prepack result; None = not quantized
  bool reduce_range = false;  // linear_dynamic's activation range: 7 bits on fbgemm/x86 (VNNI-less
                              // int16 accumulation saturates otherwise), 8 bits elsewhere
  int64_t in_features_, out_features_;
};
TORCH_MODULE(Linear);

}  // namespace llmprof::model
