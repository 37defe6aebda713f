// What the C++ side of the fused kernels shares (fused_*.cpp): a tensor's dtype as the kernels
// name it, and a launcher's error as the op's exception. Private to src/model; header-only, no
// torch.h (c10's ScalarType only).
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "fused_add_norm.h"  // NormDtype

namespace llmprof::model {

// The kernels' dtype of t; nullopt for a dtype they do not take (the LibTorch path runs).
inline std::optional<NormDtype> kernel_dtype(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float:
      return NormDtype::kFloat32;
    case c10::ScalarType::BFloat16:
      return NormDtype::kBFloat16;
    case c10::ScalarType::Half:
      return NormDtype::kFloat16;
    default:
      return std::nullopt;
  }
}

// A launcher's answer (nullptr, or the CUDA error's text) as "[op] where: error".
inline void check_launch(const char* error, const char* op, const char* where) {
  if (error != nullptr)
    throw std::runtime_error(std::string("[") + op + "] " + where + ": " + error);
}

}  // namespace llmprof::model
