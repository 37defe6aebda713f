// Dynamic int8 quantization of every model::Linear (torch.ao.quantization.quantize_dynamic's
// scheme): weights quantized per tensor, symmetric int8 once; activations quantized per call from
// their observed range by quantized::linear_dynamic, accumulated in int32, output fp32. Reached
// through the dispatcher (quantized::linear_prepack / linear_dynamic), which LibTorch 1.13 and 2.x
// both register; the engine (onednn, qnnpack, fbgemm where built) is bench.quant_engine's enum.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::model {

// Engines this LibTorch build supports (config::name gives "onednn", "qnnpack", ...).
std::vector<config::QuantEngine> quantized_engines();

struct QuantizeStats {
  int64_t linears = 0;       // layers quantized
  int64_t weight_bytes = 0;  // int8 weights + fp32 scales/zero points + fp32 biases
  config::QuantEngine engine = config::QuantEngine::kOnednn;
};

// Quantizes every model::Linear under root in place (the fp32 weights stay as the reference).
// Throws ConfigError naming `engine` and the supported list when the engine is not available.
QuantizeStats quantize_dynamic_int8(torch::nn::Module& root, config::QuantEngine engine);

// Drops the packed weights: the model runs fp32 again.
void dequantize(torch::nn::Module& root);

// Bytes of all parameters and buffers as stored (tied weights once).
int64_t parameter_bytes(torch::nn::Module& root);

}  // namespace llmprof::model
