// The configured device checked, its capabilities, the data-parallel backend and a rank's CUDA
// ordinal (llmprof/device/device.h). Torch-free.
#include "llmprof/device/device.h"

#include <fmt/format.h>

#include <cstdlib>

#include "llmprof/config/config.h"
#include "llmprof/error.h"
#include "llmprof/gpu/cuda_availability.h"

namespace llmprof::device {

void check_device(const config::Config& cfg) {
  if (!cfg.device.is_cuda()) return;
  const gpu::CudaAvailability cuda = gpu::cuda_availability();
  if (!cuda.available) {
    throw ConfigError("device: 'cuda' is not available: " + cuda.reason, cfg.source_file, "device");
  }
  if (cfg.device.index >= cuda.device_count) {
    throw ConfigError(
        fmt::format("device: cuda:{} does not exist: the CUDA runtime sees {} "
                    "device{} (cuda:0{}); check CUDA_VISIBLE_DEVICES",
                    cfg.device.index, cuda.device_count, cuda.device_count == 1 ? "" : "s",
                    cuda.device_count == 1 ? "" : fmt::format("..cuda:{}", cuda.device_count - 1)),
        cfg.source_file, "device_index");
  }
}

std::string cuda_allocator_settings(const config::Config& cfg) {
  if (!cfg.device.is_cuda()) return "";
  std::string settings;
  for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') {
      settings = value;
      break;
    }
  }
  if (cfg.train.cuda_expandable_segments) {
    settings += std::string(settings.empty() ? "" : ",") + "expandable_segments:True";
  }
  return settings;
}

Capabilities capabilities(const config::Device& device) {
  Capabilities c;
  switch (device.kind) {
    case config::DeviceKind::kCpu:
      c.int8_dynamic_quant = true;  // fbgemm / qnnpack / onednn kernels: CPU only
      break;
    case config::DeviceKind::kCuda:
      c.fp16 = true;
      c.caching_allocator = true;
      c.timing_events = true;
      c.fused_kernels = true;
      break;
  }
  return c;
}

config::DdpBackend resolve_backend(const config::Config& cfg) {
  if (cfg.ddp.backend != config::DdpBackend::kAuto) return cfg.ddp.backend;
  return cfg.device.is_cuda() ? config::DdpBackend::kNccl : config::DdpBackend::kGloo;
}

int cuda_ordinal(const config::Device& device, std::optional<int> local_rank) {
  if (!device.is_cuda()) return -1;
  return local_rank ? *local_rank : static_cast<int>(device.index);
}

}  // namespace llmprof::device
