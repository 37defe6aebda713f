// The peak measurements on a device (llmprof/device/peak.h): the matmul peak, the STREAM
// bandwidth, and `llmprof peak`'s report of both.
#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string>

#include "llmprof/base/clock.h"
#include "llmprof/device/context.h"
#include "llmprof/device/device.h"
#include "llmprof/device/peak.h"

namespace llmprof::device {

PeakFlops measure_matmul_peak(config::Precision precision,
                              int64_t n,
                              int reps,
                              const config::Device& device) {
  torch::NoGradGuard no_grad;
  const auto dtype = precision == config::Precision::kBf16   ? torch::kBFloat16
                     : precision == config::Precision::kFp16 ? torch::kHalf
                                                             : torch::kFloat;
  const torch::Device where = torch_device(device);
  const auto options = torch::TensorOptions().dtype(dtype).device(where);
  torch::Tensor a = torch::randn({n, n}).to(options);
  torch::Tensor b = torch::randn({n, n}).to(options);
  torch::Tensor c = torch::empty({n, n}, options);
  // sync: each timed matmul runs alone on the device (CUDA only; the CPU's are synchronous).
  const auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index);
  };
  for (int i = 0; i < 2; ++i) torch::mm_out(c, a, b);  // warm-up: threads, packing, cuBLAS
  sync();
  int64_t best_ns = INT64_MAX;
  for (int i = 0; i < reps; ++i) {
    int64_t t0 = now_ns();
    torch::mm_out(c, a, b);
    sync();
    best_ns = std::min(best_ns, now_ns() - t0);
  }
  PeakFlops peak;
  const double flops = 2.0 * static_cast<double>(n) * n * n;  // n^3 multiply-adds
  peak.flops_per_s = flops / (static_cast<double>(best_ns) * 1e-9);
  peak.source = "measured";
  peak.method = !device.is_cuda()
                    ? fmt::format("best of {} {} {}x{} matmuls, {} threads", reps,
                                  config::name(precision), n, n, at::get_num_threads())
                    : fmt::format("best of {} {} {}x{} matmuls on cuda:{}", reps,
                                  config::name(precision), n, n, device.index);
  return peak;
}

namespace {

// The largest cache of cpu0 in bytes (sysfs "32768K" / "8M"), 0 when sysfs says nothing.
int64_t last_level_cache_bytes() {
  int64_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    int64_t v = 0;
    size_t pos = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      v = v * 10 + (text[pos++] - '0');
    }
    const char unit = pos < text.size() ? text[pos] : ' ';
    v *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
    best = std::max(best, v);
  }
  return best;
}

}  // namespace

PeakBandwidth measure_memory_bandwidth(int64_t array_bytes,
                                       int reps,
                                       const config::Device& device) {
  torch::NoGradGuard no_grad;
  PeakBandwidth bw;
  const bool cuda = device.is_cuda();
  bw.llc_bytes = cuda ? 0 : last_level_cache_bytes();
  // Server parts hide hundreds of MiB of L3 (and VMs often hide its size): at least 1 GiB; a
  // GPU's L2 is tens of MiB.
  if (array_bytes <= 0) array_bytes = std::max<int64_t>(4 * bw.llc_bytes, int64_t{1} << 30);
  const int64_t n = array_bytes / 4;
  bw.array_bytes = n * 4;
  const auto options = torch::TensorOptions().device(torch_device(device));
  torch::Tensor a = torch::ones({n}, options), b = torch::ones({n}, options),
                c = torch::ones({n}, options);
  // sync: on CUDA each timed kernel runs alone, from an idle device to its end.
  const auto sync = [&] {
    if (cuda) torch::cuda::synchronize(device.index);
  };
  const double bytes = static_cast<double>(bw.array_bytes);
  int64_t copy_ns = INT64_MAX, triad_ns = INT64_MAX;
  for (int i = 0; i <= reps; ++i) {  // pass 0 is untimed: page faults, thread start
    sync();
    int64_t t0 = now_ns();
    b.copy_(a);
    sync();
    const int64_t t1 = now_ns();
    torch::add_out(a, b, c, /*alpha=*/3.0);  // a = b + 3 c
    sync();
    const int64_t t2 = now_ns();
    if (i == 0) continue;
    copy_ns = std::min(copy_ns, t1 - t0);
    triad_ns = std::min(triad_ns, t2 - t1);
  }
  bw.copy_bytes_per_s = 2 * bytes / (static_cast<double>(copy_ns) * 1e-9);
  bw.triad_bytes_per_s = 3 * bytes / (static_cast<double>(triad_ns) * 1e-9);
  bw.method = cuda ? fmt::format("best of {} fp32 device copy/triad over 3 x {} MiB arrays on "
                                 "cuda:{}",
                                 reps, bw.array_bytes >> 20, device.index)
                   : fmt::format("best of {} fp32 copy/triad over 3 x {} MiB arrays, {} threads",
                                 reps, bw.array_bytes >> 20, at::get_num_threads());
  return bw;
}

PeakReport measure_peak(const config::Device& device,
                        config::Precision precision,
                        bool flops_only) {
  const PeakSizes sizes = peak_sizes(device);
  PeakReport r;
  r.measured = measure_matmul_peak(precision, sizes.matmul_n, sizes.matmul_reps, device);
  if (device.is_cuda()) {
    // What train's MFU is computed against on this device, when the table knows it.
    r.datasheet = datasheet_peak(cuda_device_name(static_cast<int>(device.index)), precision);
  }
  if (flops_only) return r;
  r.bandwidth = measure_memory_bandwidth(0, sizes.peak_bandwidth_reps, device);
  const int64_t llc = r.bandwidth->llc_bytes;
  r.bandwidth_method =
      device.is_cuda() ? r.bandwidth->method + " (triad)"
      : llc > 0 ? fmt::format("{} (triad; last-level cache {} MiB)", r.bandwidth->method, llc >> 20)
                : r.bandwidth->method + " (triad; last-level cache size not in sysfs)";
  return r;
}

}  // namespace llmprof::device
