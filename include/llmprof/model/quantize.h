// Dynamic int8 quantization of every model::Linear (torch.ao.quantization.quantize_dynamic's
// scheme): weights quantized per tensor, symmetric int8 once; activations quantized per call from
// their observed range by quantized::linear_dynamic, accumulated in int32, output fp32. Reached
// through the dispatcher (quantized::linear_prepack / linear_dynamic), which LibTorch 1.13 and 2.x
// both register; the engine (onednn, qnnpack, fbgemm where built) is selected by name.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace llmprof::model {

// Engines this LibTorch build supports, by name ("onednn", "qnnpack", "fbgemm", "x86").
std::vector<std::string> quantized_engines();

struct QuantizeStats {
  int64_t linears = 0;       // layers quantized
  int64_t weight_bytes = 0;  // int8 weights + fp32 scales/zero points + fp32 biases
  std::string engine;
};

// Quantizes every model::Linear under root in place (the fp32 weights stay as the reference).
// Throws ConfigError naming `engine` and the supported list when the engine is not available.
QuantizeStats quantize_dynamic_int8(torch::nn::Module& root, const std::string& engine);

// Drops the packed weights: the model runs fp32 again.
void dequantize(torch::nn::Module& root);

// Bytes of all parameters and buffers as stored (tied weights once).
int64_t parameter_bytes(torch::nn::Module& root);

}  // namespace llmprof::model
