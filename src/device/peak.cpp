// The torch-free half of a device's peaks (llmprof/device/peak.h): the sizes each is measured
// with, the datasheet table and the CPU's flags.
#include "llmprof/device/peak.h"

#include <fmt/format.h>

#include <fstream>
#include <string>

#include "llmprof/config/enums.h"

namespace llmprof::device {

bool cpu_has_flag(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0)
      return (line + " ").find(" " + flag + " ") != std::string::npos;
  }
  return false;
}

std::optional<PeakFlops> datasheet_peak(std::string_view device_name, config::Precision precision) {
  // Dense tensor-core TFLOP/s from NVIDIA's datasheets (bf16 = fp16 on these parts), and the
  // fp32 CUDA-core figure (an fp32 LibTorch matmul does not use TF32 unless allowed).
  struct Part {
    std::string_view match;  // a substring of the CUDA device name
    std::string_view product;
    double bf16_tflops, fp32_tflops;
  };
  static constexpr Part kParts[] = {
      {"H200", "NVIDIA H200 SXM", 989.4, 66.9},     {"H100 PCIe", "NVIDIA H100 PCIe", 756.0, 51.2},
      {"H100 NVL", "NVIDIA H100 NVL", 835.0, 60.0}, {"H100", "NVIDIA H100 SXM5", 989.4, 66.9},
      {"A100", "NVIDIA A100", 312.0, 19.5},
  };
  for (const Part& p : kParts) {
    if (device_name.find(p.match) == std::string_view::npos) continue;
    const bool half = precision != config::Precision::kFp32;
    PeakFlops peak;
    peak.flops_per_s = (half ? p.bf16_tflops : p.fp32_tflops) * 1e12;
    peak.source = "datasheet";
    peak.method =
        fmt::format("{} dense {} peak, {} TFLOP/s (NVIDIA datasheet; '{}')", p.product,
                    half ? "bf16/fp16 tensor-core" : "fp32", peak.flops_per_s * 1e-12, device_name);
    return peak;
  }
  return std::nullopt;
}

PeakSizes peak_sizes(const config::Device& device) {
  PeakSizes s;
  s.run_bandwidth_reps = 3;  // ~2 s of a run's set-up at profile.level=ops
  switch (device.kind) {
    case config::DeviceKind::kCpu:
      s.matmul_n = 2048;  // ~0.1 TFLOP: a fraction of a second on a few cores
      s.matmul_reps = 5;
      s.peak_bandwidth_reps = 5;
      break;
    case config::DeviceKind::kCuda:
      s.matmul_n = 8192;  // 1.1 TFLOP: ~1 ms on an H100, long enough to time between syncs
      s.matmul_reps = 10;
      s.peak_bandwidth_reps = 10;
      break;
  }
  return s;
}

}  // namespace llmprof::device
