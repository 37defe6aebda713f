// Peak FLOP/s for MFU: configured (profile.peak_flops_per_s) or measured once with a short
// square matmul at the run's precision and thread count.
#pragma once

#include <cstdint>
#include <string>

#include "llmprof/config/enums.h"

namespace llmprof::train {

struct PeakFlops {
  double flops_per_s = 0;
  std::string source;  // "configured" | "measured"
  std::string method;  // e.g. "best of 5 fp32 2048x2048 matmuls, 2 threads"
};

// Best-of-reps throughput of an n x n x n matmul: bf16 for kBf16, else fp32.
PeakFlops measure_matmul_peak(config::Precision precision, int64_t n, int reps);

}  // namespace llmprof::train
