// The monotonic clock every concern stamps times with: raw int64 nanoseconds of steady_clock,
// cheap to read and store on the hot path, converted to ms or s only at output. One clock, so
// phase intervals (profile), power samples (telemetry), GPU records (gpu) and eval timings line
// up without conversion.
#pragma once

#include <chrono>
#include <cstdint>

namespace llmprof {

// Monotonic clock read as raw int64 nanoseconds: the only thing the hot path stores.
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace llmprof
