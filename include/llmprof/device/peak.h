// A device's peaks: the FLOP/s MFU is computed against (configured in profile.peak_flops_per_s,
// a CUDA device's datasheet figure, or measured once with a short square matmul at the run's
// precision and thread count) and the memory roof of the roofline; the sizes each is measured
// with, one table for a run (DeviceContext) and `llmprof peak` (measure_peak). Torch-free
// header; the measurements link the device's torch companion.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "llmprof/config/enums.h"

namespace llmprof::device {

struct PeakFlops {
  double flops_per_s = 0;
  std::string source;  // "configured" | "measured"
  std::string method;  // e.g. "best of 5 fp32 2048x2048 matmuls, 2 threads"
  // An fp32 run on a CPU with native bf16 whose peak was measured: the bf16 peak beside it, for
  // the report's precision finding; 0 otherwise.
  double bf16_flops_per_s = 0;
};

// /proc/cpuinfo lists the flag (e.g. "avx512_bf16", "amx_bf16") for this CPU.
bool cpu_has_flag(const std::string& flag);

// The memory roof of a run (the roofline's other side): configured (profile.peak_bytes_per_s),
// measured (STREAM triad, at profile.level=ops where the roofline needs it), or unknown
// (bytes_per_s 0, source "none", with why in method).
struct PeakBytes {
  double bytes_per_s = 0;
  double copy_bytes_per_s = 0;  // measured only
  std::string source;           // "configured" | "measured" | "none"
  std::string method;
};

// Best-of-reps throughput of an n x n x n matmul at precision (fp16 on CUDA only), on the CPU
// or on a CUDA device, where each rep is timed between two device synchronizations.
PeakFlops measure_matmul_peak(config::Precision precision,
                              int64_t n,
                              int reps,
                              const config::Device& device = {});

// NVIDIA's dense (no sparsity) tensor-core peak for a device by its CUDA name ("NVIDIA H100 80GB
// HBM3") at a precision (fp32 runs count TF32 tensor cores, PyTorch's default for matmuls is
// fp32 though: the figure is then the CUDA-core fp32 peak); nullopt for a device not in the
// table. source "datasheet", method names the product and the figure's origin.
std::optional<PeakFlops> datasheet_peak(std::string_view device_name, config::Precision precision);

// Memory bandwidth the run can reach, STREAM-style (McCalpin): fp32 copy (b = a, 2 x 4 bytes per
// element) and triad (a = b + s * c, 3 x 4 bytes per element) over three arrays of
// array_bytes each, well beyond the last-level cache, at the run's thread count through
// LibTorch's own kernels (what ops see). Best of reps, after one untimed pass.
struct PeakBandwidth {
  double copy_bytes_per_s = 0;
  double triad_bytes_per_s = 0;
  int64_t array_bytes = 0;
  int64_t llc_bytes = 0;  // the last-level cache found in sysfs; 0 when unknown
  std::string method;     // e.g. "best of 5 fp32 copy/triad over 3 x 256 MiB arrays, 2 threads"
};

// array_bytes 0: 4 x the last-level cache (sysfs), at least 1 GiB (server L3s reach hundreds of
// MiB and VMs often do not show their size). On a CUDA device: its memory, each pass timed from
// an idle device to its end.
PeakBandwidth measure_memory_bandwidth(int64_t array_bytes,
                                       int reps,
                                       const config::Device& device = {});

// The sizes of the peak measurements on a kind of device.
struct PeakSizes {
  int64_t matmul_n = 0;         // the n x n x n matmul: 2048 on the CPU, 8192 on CUDA
  int matmul_reps = 0;          // best of 5 (CPU), 10 (CUDA)
  int run_bandwidth_reps = 0;   // a run's memory roof (profile.level=ops): best of 3
  int peak_bandwidth_reps = 0;  // `llmprof peak`, which has the time: best of 5 (CPU), 10 (CUDA)
};
PeakSizes peak_sizes(const config::Device& device);

// What `llmprof peak` measures on a device: the matmul peak at precision (fp16 on CUDA only),
// beside it the datasheet's where the table knows the CUDA device, and unless flops_only the
// memory bandwidth, each with how it was measured.
struct PeakReport {
  PeakFlops measured;
  std::optional<PeakFlops> datasheet;      // CUDA, a device in datasheet_peak's table
  std::optional<PeakBandwidth> bandwidth;  // not with flops_only
  // bandwidth's method with what it is the roof of: "... (triad)"; on the CPU with the last-level
  // cache the arrays exceed ("... (triad; last-level cache 32 MiB)").
  std::string bandwidth_method;
};
PeakReport measure_peak(const config::Device& device, config::Precision precision, bool flops_only);

}  // namespace llmprof::device
