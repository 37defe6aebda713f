#include "llmprof/telemetry/nvml.h"

#include <dlfcn.h>

#include <utility>

#include "nvml_abi.h"

namespace llmprof::telemetry {

struct NvmlSource::Api {
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::ErrorStringFn error_string = nullptr;  // optional
  nvml::DeviceGetCountFn get_count = nullptr;
  nvml::DeviceGetHandleByIndexFn get_handle = nullptr;
  nvml::DeviceGetNameFn get_name = nullptr;  // optional, as every per-device query below
  nvml::DeviceGetPowerUsageFn get_power = nullptr;
  nvml::DeviceGetTotalEnergyConsumptionFn get_energy = nullptr;
  nvml::DeviceGetUtilizationRatesFn get_utilization = nullptr;
  nvml::DeviceGetMemoryInfoFn get_memory = nullptr;
  nvml::DeviceGetClockInfoFn get_clock = nullptr;
  nvml::DeviceGetTemperatureFn get_temperature = nullptr;
};

struct NvmlSource::Device {
  nvml::Device handle = nullptr;
  bool energy_counter = false;  // else power integration
  unsigned long long start_mj = 0;
  int64_t last_energy_read_ns = 0;
  bool energy_read = false;  // the counter was read since start()
};

namespace {

// nvmlDeviceGetTotalEnergyConsumption costs ~4 ms of CPU per call and its value changes ~10 times
// a second (both measured on an H100, driver 580); power costs ~0.07 ms. So the counter is read at
// most this often and the frames between carry power only (EnergyMonitor bridges with it).
constexpr int64_t kEnergyReadIntervalNs = 90000000;

// Looks a symbol up as type F; nullptr when absent.
template <typename F>
F lookup(void* handle, const char* symbol) {
  return reinterpret_cast<F>(dlsym(handle, symbol));
}

}  // namespace

NvmlSource::NvmlSource(std::string library)
    : library_(std::move(library)), api_(std::make_unique<Api>()) {}

NvmlSource::~NvmlSource() { close(); }

void NvmlSource::close() {
  if (initialised_ && api_->shutdown != nullptr) api_->shutdown();
  initialised_ = false;
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
}

std::string NvmlSource::error_text(const char* call, int code) const {
  std::string text = std::string(call) + ": ";
  const char* msg = api_->error_string != nullptr ? api_->error_string(code) : nullptr;
  text += msg != nullptr ? msg : "error";
  return text + " (code " + std::to_string(code) + ")";
}

std::string NvmlSource::load_symbols() {
  Api& a = *api_;
  struct Required {
    const char* symbol;
    bool found;
  };
  a.init = lookup<nvml::InitFn>(handle_, "nvmlInit_v2");
  a.shutdown = lookup<nvml::ShutdownFn>(handle_, "nvmlShutdown");
  a.get_count = lookup<nvml::DeviceGetCountFn>(handle_, "nvmlDeviceGetCount_v2");
  a.get_handle = lookup<nvml::DeviceGetHandleByIndexFn>(handle_, "nvmlDeviceGetHandleByIndex_v2");
  const Required required[] = {{"nvmlInit_v2", a.init != nullptr},
                               {"nvmlShutdown", a.shutdown != nullptr},
                               {"nvmlDeviceGetCount_v2", a.get_count != nullptr},
                               {"nvmlDeviceGetHandleByIndex_v2", a.get_handle != nullptr}};
  for (const Required& r : required) {
    if (!r.found) return library_ + ": symbol " + r.symbol + " not found (driver too old?)";
  }
  a.error_string = lookup<nvml::ErrorStringFn>(handle_, "nvmlErrorString");
  a.get_name = lookup<nvml::DeviceGetNameFn>(handle_, "nvmlDeviceGetName");
  a.get_power = lookup<nvml::DeviceGetPowerUsageFn>(handle_, "nvmlDeviceGetPowerUsage");
  a.get_energy = lookup<nvml::DeviceGetTotalEnergyConsumptionFn>(
      handle_, "nvmlDeviceGetTotalEnergyConsumption");
  a.get_utilization =
      lookup<nvml::DeviceGetUtilizationRatesFn>(handle_, "nvmlDeviceGetUtilizationRates");
  a.get_memory = lookup<nvml::DeviceGetMemoryInfoFn>(handle_, "nvmlDeviceGetMemoryInfo");
  a.get_clock = lookup<nvml::DeviceGetClockInfoFn>(handle_, "nvmlDeviceGetClockInfo");
  a.get_temperature = lookup<nvml::DeviceGetTemperatureFn>(handle_, "nvmlDeviceGetTemperature");
  if (a.get_power == nullptr && a.get_energy == nullptr) {
    return library_ + ": neither nvmlDeviceGetTotalEnergyConsumption nor " +
           "nvmlDeviceGetPowerUsage found";
  }
  return "";
}

std::string NvmlSource::add_device(unsigned int index) {
  const Api& a = *api_;
  Device dev;
  nvml::Return rc = a.get_handle(index, &dev.handle);
  if (rc != nvml::kSuccess) return error_text("nvmlDeviceGetHandleByIndex_v2", rc);
  unsigned long long mj = 0;
  unsigned int mw = 0;
  if (a.get_energy != nullptr && a.get_energy(dev.handle, &mj) == nvml::kSuccess) {
    dev.energy_counter = true;
  } else if (a.get_power == nullptr || (rc = a.get_power(dev.handle, &mw)) != nvml::kSuccess) {
    return std::string("neither the energy counter nor power usage is supported") +
           (a.get_power != nullptr ? " (" + error_text("nvmlDeviceGetPowerUsage", rc) + ")"
                                   : std::string());
  }
  char name[nvml::kDeviceNameBufferSize] = "unknown GPU";
  if (a.get_name != nullptr &&
      a.get_name(dev.handle, name, nvml::kDeviceNameBufferSize) != nvml::kSuccess) {
    name[0] = '\0';
  }
  ChannelInfo ch;
  ch.source = "nvml";
  ch.domain = "gpu" + std::to_string(index);
  ch.label = std::string(name[0] != '\0' ? name : "unknown GPU") +
             (dev.energy_counter ? " (total energy counter)" : " (power usage, integrated)");
  ch.kind = dev.energy_counter ? ChannelKind::kCounter : ChannelKind::kPower;
  ch.in_total = true;
  devices_.push_back(dev);
  channels_.push_back(std::move(ch));
  return "";
}

Availability NvmlSource::available() {
  close();
  devices_.clear();
  channels_.clear();
  *api_ = Api{};
  handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* err = dlerror();
    return {false, "dlopen(" + library_ + ") failed: " + (err != nullptr ? err : "?") +
                       " (no NVIDIA driver here, or set energy.nvml_library)"};
  }
  if (std::string reason = load_symbols(); !reason.empty()) {
    close();
    return {false, reason};
  }
  nvml::Return rc = api_->init();
  if (rc != nvml::kSuccess) {
    std::string reason = error_text("nvmlInit_v2", rc);
    close();
    return {false, reason};
  }
  initialised_ = true;
  unsigned int count = 0;
  rc = api_->get_count(&count);
  if (rc != nvml::kSuccess || count == 0) {
    std::string reason = rc != nvml::kSuccess ? error_text("nvmlDeviceGetCount_v2", rc)
                                              : "nvmlDeviceGetCount_v2: no GPU";
    close();
    return {false, reason};
  }
  std::string skipped;  // why GPUs were left out, should all of them be
  for (unsigned int i = 0; i < count; ++i) {
    if (std::string why = add_device(i); !why.empty()) {
      skipped += "; gpu" + std::to_string(i) + ": " + why;
    }
  }
  if (devices_.empty()) {
    close();
    return {false, "no GPU with power or energy readings" + skipped};
  }
  return {true, ""};
}

void NvmlSource::start(int64_t /*now_ns*/) {
  for (Device& dev : devices_) {
    dev.start_mj = 0;
    dev.energy_read = false;
    if (dev.energy_counter) api_->get_energy(dev.handle, &dev.start_mj);
  }
}

void NvmlSource::sample(int64_t now_ns, Reading* out) {
  const Api& a = *api_;
  for (size_t i = 0; i < devices_.size(); ++i) {
    Device& dev = devices_[i];
    Reading& r = out[i];
    r = kEmptyReading;
    unsigned long long mj = 0;
    const bool read_energy =
        dev.energy_counter &&
        (!dev.energy_read || now_ns - dev.last_energy_read_ns >= kEnergyReadIntervalNs);
    if (read_energy && a.get_energy(dev.handle, &mj) == nvml::kSuccess) {
      r.energy_j = static_cast<double>(mj - dev.start_mj) * 1e-3;
      dev.energy_read = true;
      dev.last_energy_read_ns = now_ns;
    }
    unsigned int value = 0;
    if (a.get_power != nullptr && a.get_power(dev.handle, &value) == nvml::kSuccess) {
      r.power_w = value * 1e-3;
    }
    nvml::Utilization util{};
    if (a.get_utilization != nullptr && a.get_utilization(dev.handle, &util) == nvml::kSuccess) {
      r.utilisation = util.gpu * 0.01;
    }
    nvml::Memory mem{};
    if (a.get_memory != nullptr && a.get_memory(dev.handle, &mem) == nvml::kSuccess) {
      r.memory_used_bytes = static_cast<double>(mem.used);
    }
    if (a.get_clock != nullptr &&
        a.get_clock(dev.handle, nvml::kClockSm, &value) == nvml::kSuccess) {
      r.sm_clock_mhz = value;
    }
    if (a.get_temperature != nullptr &&
        a.get_temperature(dev.handle, nvml::kTemperatureGpu, &value) == nvml::kSuccess) {
      r.temperature_c = value;
    }
  }
}

}  // namespace llmprof::telemetry
