#include "llmprof/train/calibrate.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>

#include "llmprof/base/clock.h"

namespace llmprof::train {

PeakFlops measure_matmul_peak(config::Precision precision, int64_t n, int reps) {
  torch::NoGradGuard no_grad;
  auto dtype = precision == config::Precision::kBf16 ? torch::kBFloat16 : torch::kFloat;
  torch::Tensor a = torch::randn({n, n}).to(dtype);
  torch::Tensor b = torch::randn({n, n}).to(dtype);
  torch::Tensor c = torch::empty({n, n}, dtype);
  for (int i = 0; i < 2; ++i) torch::mm_out(c, a, b);  // warm-up: threads, packing buffers
  int64_t best_ns = INT64_MAX;
  for (int i = 0; i < reps; ++i) {
    int64_t t0 = now_ns();
    torch::mm_out(c, a, b);
    best_ns = std::min(best_ns, now_ns() - t0);
  }
  PeakFlops peak;
  const double flops = 2.0 * static_cast<double>(n) * n * n;  // n^3 multiply-adds
  peak.flops_per_s = flops / (static_cast<double>(best_ns) * 1e-9);
  peak.source = "measured";
  peak.method = fmt::format("best of {} {} {}x{} matmuls, {} threads", reps,
                            config::name(precision), n, n, at::get_num_threads());
  return peak;
}

}  // namespace llmprof::train
