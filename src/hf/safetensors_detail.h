// Pieces the safetensors reader and writer share. Private to src/hf.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/hf/safetensors.h"

namespace llmprof::hf::detail {

// The reference implementation's MAX_HEADER_SIZE: it refuses a longer header, and so do we.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Elements and bytes of a tensor of this dtype and shape.
struct TensorSize {
  uint64_t numel = 0;
  uint64_t bytes = 0;
};

// numel and bytes, or why they cannot be had: a negative dimension, a product past 2^63, or a
// sub-byte dtype whose elements do not fill whole bytes. The error is a phrase to put after the
// tensor's name.
struct TensorSizeResult {
  std::optional<TensorSize> size;
  std::string error;
};
TensorSizeResult tensor_size(DType dtype, const std::vector<int64_t>& shape);

// "[2, 3]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace llmprof::hf::detail
