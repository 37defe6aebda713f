// The devices llmprof plan knows: capacity and datasheet peaks, or a byte count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::plan {

// GPU memory a LibTorch process holds outside the caching allocator (the CUDA context, the
// libraries' handles): 0.73-0.75 GiB in the 12 out-of-memory reports of an H200 run (LibTorch
// 2.11, CUDA 13: "this process has X in use" minus PyTorch's allocated and reserved).
inline constexpr int64_t kCudaContextBytes = int64_t{768} << 20;

struct DeviceSpec {
  std::string name;            // as given: h100-80gb, a100-40gb, cpu, cuda, 42949672960
  std::string product;         // "NVIDIA A100-SXM4-40GB", "this machine's memory"
  bool cuda = true;            // the CUDA caching allocator applies
  int64_t capacity_bytes = 0;  // total memory
  int64_t reserved_bytes =
      0;  // outside the caching allocator: the CUDA context (kCudaContextBytes)
  double bf16_flops_per_s = 0;  // dense tensor-core peak; 0 = unknown
  double fp32_flops_per_s = 0;  // non-tensor-core fp32 peak; 0 = unknown
  double bytes_per_s = 0;       // DRAM bandwidth; 0 = unknown
  std::string source;           // where the figures come from

  int64_t usable_bytes() const { return capacity_bytes - reserved_bytes; }
};

// The names find_device accepts, besides a byte count ("cpu", "cuda", "h100-80gb", ...).
std::vector<std::string> known_devices();

// A known device by name, by product name in any case (H100, h200, A100-80GB: what
// device_for_product matches), or a byte count (e.g. 42949672960, 40GiB, 40GB). cpu: this machine's
// MemAvailable. Throws UsageError listing the known names for anything else. "cuda" is resolved by
// the caller (the current GPU's properties); here it is an error unless cuda_name/bytes are given.
DeviceSpec find_device(std::string_view name);

// The table entry whose product matches a CUDA device name (e.g. "NVIDIA H100 80GB HBM3"), for
// the peaks of `--device cuda`; nullopt when unknown.
std::optional<DeviceSpec> device_for_product(std::string_view cuda_name);

}  // namespace llmprof::plan
