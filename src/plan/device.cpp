// The device table of llmprof plan (device.h). Datasheet figures: NVIDIA A100 datasheet (SXM4:
// 312 TFLOP/s bf16 dense, 19.5 fp32, 1,555 GB/s (40GB) and 2,039 GB/s (80GB)); H100 SXM5 (989
// TFLOP/s bf16 dense, 67 fp32, 3.35 TB/s); H200 SXM (989, 67, 4.8 TB/s, 141 GB). "usable" leaves
// the CUDA context out (kCudaContextBytes, measured); workspaces count in the plan's reserved.
#include "llmprof/plan/device.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "llmprof/error.h"

namespace llmprof::plan {

namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kCudaOverhead = kCudaContextBytes;

std::vector<DeviceSpec> table() {
  const std::string sheet = "NVIDIA datasheet (dense)";
  return {
      {"h100-80gb", "NVIDIA H100 80GB HBM3", true, 80 * kGiB, kCudaOverhead, 989e12, 67e12, 3.35e12,
       sheet},
      {"h200", "NVIDIA H200", true, 141000000000LL, kCudaOverhead, 989e12, 67e12, 4.8e12, sheet},
      {"a100-40gb", "NVIDIA A100-SXM4-40GB", true, 40 * kGiB, kCudaOverhead, 312e12, 19.5e12,
       1.555e12, sheet},
      {"a100-80gb", "NVIDIA A100-SXM4-80GB", true, 80 * kGiB, kCudaOverhead, 312e12, 19.5e12,
       2.039e12, sheet},
  };
}

// MemAvailable of /proc/meminfo in bytes (0 when unreadable).
int64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

// "42949672960", "40GiB", "40GB", "512MiB" -> bytes; -1 when not a byte count.
int64_t parse_bytes(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0 || i > 15) return -1;
  const int64_t n = std::stoll(std::string(text.substr(0, i)));
  const std::string_view unit = text.substr(i);
  if (unit.empty() || unit == "B") return n;
  if (unit == "KiB") return n << 10;
  if (unit == "MiB") return n << 20;
  if (unit == "GiB") return n << 30;
  if (unit == "KB") return n * 1000;
  if (unit == "MB") return n * 1000000;
  if (unit == "GB") return n * 1000000000;
  return -1;
}

std::string known_list() {
  std::string s;
  for (const std::string& n : known_devices()) s += (s.empty() ? "" : ", ") + n;
  return s +
         ", a product name (e.g. H100, H200, A100-40GB), or a byte count (e.g. 42949672960, "
         "40GiB, 24GB)";
}

}  // namespace

std::vector<std::string> known_devices() {
  std::vector<std::string> names = {"cpu", "cuda"};
  for (const DeviceSpec& d : table()) names.push_back(d.name);
  return names;
}

DeviceSpec find_device(std::string_view name) {
  for (const DeviceSpec& d : table()) {
    if (d.name == name) return d;
  }
  if (name == "cpu") {
    DeviceSpec d{"cpu",
                 "this machine's memory (MemAvailable)",
                 false,
                 mem_available_bytes(),
                 0,
                 0,
                 0,
                 0,
                 "/proc/meminfo"};
    if (d.capacity_bytes <= 0) throw Error("llmprof plan --device cpu: /proc/meminfo unreadable");
    return d;
  }
  if (name == "cuda") {
    throw UsageError("--device cuda: this build has no CUDA device to read; name one of " +
                     known_list());
  }
  // A product name as nvidia-smi prints it, in any case: "H100", "NVIDIA A100-SXM4-40GB".
  std::string upper(name);
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (const std::optional<DeviceSpec> d = device_for_product(upper)) return *d;
  const int64_t bytes = parse_bytes(name);
  if (bytes > 0) {
    return {std::string(name),
            "a device of " + std::string(name),
            true,
            bytes,
            0,
            0,
            0,
            0,
            "--device (capacity only: no peaks, so no step time)"};
  }
  throw UsageError(fmt::format("--device '{}': unknown device; known: {}", name, known_list()));
}

std::optional<DeviceSpec> device_for_product(std::string_view cuda_name) {
  for (const DeviceSpec& d : table()) {
    const bool h100 = d.name == "h100-80gb" && cuda_name.find("H100") != std::string_view::npos;
    const bool h200 = d.name == "h200" && cuda_name.find("H200") != std::string_view::npos;
    const bool a100 =
        cuda_name.find("A100") != std::string_view::npos &&
        ((d.name == "a100-40gb" && cuda_name.find("40GB") != std::string_view::npos) ||
         (d.name == "a100-80gb" && cuda_name.find("80GB") != std::string_view::npos));
    if (h100 || h200 || a100) return d;
  }
  return std::nullopt;
}

}  // namespace llmprof::plan
