#include "llmprof/model/quantize.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <unordered_set>

#include "llmprof/error.h"
#include "llmprof/model/linear.h"

namespace llmprof::model {

namespace {

using config::QuantEngine;

// LibTorch's engine for each of ours (the names are config's, config/enums.h).
struct EnginePair {
  QuantEngine ours;
  at::QEngine torch;
};
constexpr EnginePair kEngines[] = {
    {QuantEngine::kFbgemm, at::QEngine::FBGEMM},
    {QuantEngine::kQnnpack, at::QEngine::QNNPACK},
    {QuantEngine::kOnednn, at::QEngine::ONEDNN},
    {QuantEngine::kX86, at::QEngine::X86},
};

at::QEngine torch_engine(QuantEngine engine) {
  for (const EnginePair& e : kEngines) {
    if (e.ours == engine) return e.torch;
  }
  return at::QEngine::NoQEngine;
}

std::string join(const std::vector<QuantEngine>& engines) {
  std::string out;
  for (QuantEngine e : engines) out += (out.empty() ? "" : ", ") + std::string(config::name(e));
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<QuantEngine> quantized_engines() {
  std::vector<QuantEngine> engines;
  for (at::QEngine e : at::globalContext().supportedQEngines()) {
    for (const EnginePair& en : kEngines) {
      if (en.torch == e) engines.push_back(en.ours);
    }
  }
  return engines;
}

QuantizeStats quantize_dynamic_int8(torch::nn::Module& root, QuantEngine engine) {
  const std::vector<QuantEngine> supported = quantized_engines();
  if (std::find(supported.begin(), supported.end(), engine) == supported.end()) {
    throw ConfigError("[quantize] int8 engine '" + std::string(config::name(engine)) +
                      "' is not supported by this LibTorch build; supported: " + join(supported));
  }
  const at::QEngine chosen = torch_engine(engine);
  // Process-wide: linear_prepack builds the packed format of the current engine.
  at::globalContext().setQEngine(chosen);
  static const c10::OperatorHandle prepack =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");

  torch::NoGradGuard no_grad;
  QuantizeStats stats;
  stats.engine = engine;
  for (const auto& module : root.modules(/*include_self=*/true)) {
    auto* lin = module->as<LinearImpl>();
    if (lin == nullptr) continue;
    // Weight: per-tensor symmetric int8, scale = max|w| / 127, zero point 0 (the default dynamic
    // qconfig's MinMax symmetric observer); an all-zero weight gets scale 1.
    torch::Tensor w = lin->weight.detach().to(torch::kFloat).contiguous();
    double scale = w.numel() > 0 ? w.abs().max().item<double>() / 127.0 : 0.0;
    if (!(scale > 0.0)) scale = 1.0;
    torch::Tensor qw = torch::quantize_per_tensor(w, scale, /*zero_point=*/0, torch::kQInt8);
    c10::IValue b;  // None
    if (lin->bias.defined()) b = lin->bias.detach().to(torch::kFloat).contiguous();
    // quantized::linear_prepack(Tensor W, Tensor? B=None) -> LinearPackedParamsBase
    std::vector<c10::IValue> stack{qw, b};
    prepack.callBoxed(&stack);
    lin->packed = std::move(stack[0]);
    // fbgemm/x86 multiply uint8 x int8 pairs into int16 (vpmaddubsw) and saturate with full-range
    // activations; torch.ao's dynamic Linear asks for 7-bit activations there.
    lin->reduce_range = chosen == at::QEngine::FBGEMM || chosen == at::QEngine::X86;
    ++stats.linears;
    stats.weight_bytes += w.numel() + 8;  // int8 weights + fp32 scale + int32 zero point
    if (lin->bias.defined()) stats.weight_bytes += lin->bias.numel() * 4;
  }
  return stats;
}

void dequantize(torch::nn::Module& root) {
  for (const auto& module : root.modules(/*include_self=*/true)) {
    if (auto* lin = module->as<LinearImpl>()) {
      lin->packed = c10::IValue();
      lin->reduce_range = false;
    }
  }
}

int64_t parameter_bytes(torch::nn::Module& root) {
  std::unordered_set<const void*> seen;
  int64_t bytes = 0;
  auto add = [&](const torch::Tensor& t) {
    if (!t.defined() || t.numel() == 0) return;
    if (!seen.insert(t.data_ptr()).second) return;  // tied: the same storage counted once
    bytes += t.numel() * static_cast<int64_t>(t.element_size());
  };
  for (const auto& p : root.parameters(/*recurse=*/true)) add(p);
  for (const auto& b : root.buffers(/*recurse=*/true)) add(b);
  return bytes;
}

}  // namespace llmprof::model
