// Whole numbers read as doubles (JSON, CSV cells) taken into int64_t only when they fit: casting
// a double past int64_t's range is undefined behaviour, and these come from files anyone can edit.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

namespace llmprof {

// v as int64_t when it is a whole number in [-2^63, 2^63); nullopt for NaN, infinities, a
// fraction or a value out of range.
inline std::optional<int64_t> whole_int64(double v) {
  constexpr double kTwo63 = 9223372036854775808.0;  // 2^63, exact in a double
  if (!(v >= -kTwo63 && v < kTwo63) || v != std::trunc(v)) return std::nullopt;
  return static_cast<int64_t>(v);
}

// v truncated toward zero into int64_t when it is finite and in range; nullopt otherwise.
inline std::optional<int64_t> truncated_int64(double v) {
  return std::isnan(v) ? std::nullopt : whole_int64(std::trunc(v));
}

}  // namespace llmprof
