// printable_json(): a JSON value from input (a field of a fixture, a safetensors header, a vocab
// file) made safe to put in an error message, as printable() does for text. Header only.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "llmprof/base/printable.h"

namespace llmprof {

namespace detail {

// True when value nests arrays or objects more than depth levels deep. Visits at most depth
// levels, so the recursion is bounded whatever the input.
inline bool json_deeper_than(const nlohmann::json& value, int depth) {
  if (!value.is_structured()) return false;
  if (depth == 0) return true;
  for (const nlohmann::json& item : value) {
    if (json_deeper_than(item, depth - 1)) return true;
  }
  return false;
}

}  // namespace detail

// The value's JSON text through printable(text, max_bytes); for a value nested deeper than 32
// levels, "an array of N items" or "an object of N keys" instead: dump() recurses once per level,
// so a deeply nested input (100,000 '[') would overflow the stack while being described.
inline std::string printable_json(const nlohmann::json& value, size_t max_bytes = 80) {
  constexpr int kMaxDepth = 32;
  if (detail::json_deeper_than(value, kMaxDepth)) {
    const std::string n = std::to_string(value.size());
    return value.is_array() ? "an array of " + n + " items nested over " +
                                  std::to_string(kMaxDepth) + " levels deep"
                            : "an object of " + n + " keys nested over " +
                                  std::to_string(kMaxDepth) + " levels deep";
  }
  return printable(value.dump(), max_bytes);
}

}  // namespace llmprof
