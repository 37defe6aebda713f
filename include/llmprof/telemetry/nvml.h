// NVIDIA GPU power and energy through NVML, loaded at run time with dlopen so llmprof builds and
// runs without the driver: a missing library, a missing symbol, a failed init or no GPU makes the
// source unavailable with the reason. Per GPU it prefers the total-energy counter
// (nvmlDeviceGetTotalEnergyConsumption, mJ, Volta and newer) and otherwise integrates
// nvmlDeviceGetPowerUsage (mW); utilisation, memory in use, SM clock and temperature ride along.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llmprof/telemetry/energy_source.h"

namespace llmprof::telemetry {

class NvmlSource final : public EnergySource {
 public:
  // library: a name the loader searches ("libnvidia-ml.so.1") or a path (tests' fake).
  explicit NvmlSource(std::string library = "libnvidia-ml.so.1");
  // Shuts NVML down and closes the library if they were opened.
  ~NvmlSource() override;

  std::string_view name() const override { return "nvml"; }
  // dlopen, symbol lookup, nvmlInit_v2, device enumeration and a probe read per GPU.
  Availability available() override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void start(int64_t now_ns) override;
  void stop() override {}
  void sample(int64_t now_ns, Reading* out) override;

 private:
  struct Api;     // resolved function pointers (src/telemetry/nvml.cpp)
  struct Device;  // one GPU's handle and counter baseline
  // "nvmlX: <nvmlErrorString> (code N)".
  std::string error_text(const char* call, int code) const;
  // Resolves the API's symbols; why NVML cannot be used, or "".
  std::string load_symbols();
  // Probes GPU `index` and adds it with its channel; why it was left out, or "".
  std::string add_device(unsigned int index);
  void close();

  std::string library_;
  void* handle_ = nullptr;
  bool initialised_ = false;
  std::unique_ptr<Api> api_;
  std::vector<Device> devices_;
  std::vector<ChannelInfo> channels_;
};

}  // namespace llmprof::telemetry
