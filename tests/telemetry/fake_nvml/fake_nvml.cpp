// A fake libnvidia-ml.so for the telemetry tests: the NVML entry points NvmlSource uses, answering
// from state the test sets through the fake_nvml_* control functions (it dlopens the same path,
// so both see one copy). By default: 2 GPUs; GPU 0 has the energy counter (Volta+), GPU 1 does
// not (NVML_ERROR_NOT_SUPPORTED), both report power, 50% utilisation, 60 C, 1410 MHz, 1 GiB used.
// Built three times: full; FAKE_NVML_NO_ENERGY (no nvmlDeviceGetTotalEnergyConsumption symbol);
// FAKE_NVML_NO_COUNT (no nvmlDeviceGetCount_v2: a library NvmlSource must refuse).
#include <cstring>

#include "nvml_abi.h"

namespace nvml = llmprof::telemetry::nvml;

namespace {

constexpr unsigned kMaxDevices = 4;

struct FakeDevice {
  unsigned index;
  unsigned power_mw;
  unsigned long long energy_mj;
  bool energy_supported;
};

FakeDevice g_devices[kMaxDevices];
unsigned g_count = 2;
int g_init_return = 0;
int g_shutdown_calls = 0;

void reset() {
  for (unsigned i = 0; i < kMaxDevices; ++i) {
    g_devices[i] = FakeDevice{i, 150000, 1000000, i == 0};
  }
  g_devices[1].power_mw = 75000;
  g_count = 2;
  g_init_return = 0;
  g_shutdown_calls = 0;
}

struct Init {
  Init() { reset(); }
} g_init;

FakeDevice* dev(nvml::Device d) { return reinterpret_cast<FakeDevice*>(d); }

}  // namespace

extern "C" {

// Control functions for the tests.
void fake_nvml_reset() { reset(); }
void fake_nvml_set_device_count(unsigned n) { g_count = n < kMaxDevices ? n : kMaxDevices; }
void fake_nvml_set_power_mw(unsigned i, unsigned mw) { g_devices[i].power_mw = mw; }
void fake_nvml_set_energy_mj(unsigned i, unsigned long long mj) { g_devices[i].energy_mj = mj; }
void fake_nvml_set_init_return(int rc) { g_init_return = rc; }
int fake_nvml_shutdown_calls() { return g_shutdown_calls; }

// The NVML ABI.
nvml::Return nvmlInit_v2() { return g_init_return; }
nvml::Return nvmlShutdown() {
  ++g_shutdown_calls;
  return nvml::kSuccess;
}
const char* nvmlErrorString(nvml::Return rc) {
  return rc == 9                          ? "Driver Not Loaded"
         : rc == nvml::kErrorNotSupported ? "Not Supported"
                                          : "Unknown Error";
}
#ifndef FAKE_NVML_NO_COUNT
nvml::Return nvmlDeviceGetCount_v2(unsigned* count) {
  *count = g_count;
  return nvml::kSuccess;
}
#endif
nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml::Device* d) {
  if (i >= g_count) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *d = reinterpret_cast<nvml::Device>(&g_devices[i]);
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetName(nvml::Device d, char* name, unsigned length) {
  char text[32] = "Fake GPU 0";
  text[9] = static_cast<char>('0' + dev(d)->index);
  std::strncpy(name, text, length);
  name[length - 1] = '\0';
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetPowerUsage(nvml::Device d, unsigned* mw) {
  *mw = dev(d)->power_mw;
  return nvml::kSuccess;
}
#ifndef FAKE_NVML_NO_ENERGY
nvml::Return nvmlDeviceGetTotalEnergyConsumption(nvml::Device d, unsigned long long* mj) {
  if (!dev(d)->energy_supported) return nvml::kErrorNotSupported;
  *mj = dev(d)->energy_mj;
  return nvml::kSuccess;
}
#endif
nvml::Return nvmlDeviceGetUtilizationRates(nvml::Device, nvml::Utilization* u) {
  u->gpu = 50;
  u->memory = 20;
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetMemoryInfo(nvml::Device, nvml::Memory* m) {
  m->total = 16ull << 30;
  m->used = 1ull << 30;
  m->free = m->total - m->used;
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetClockInfo(nvml::Device, int type, unsigned* mhz) {
  if (type != nvml::kClockSm) return nvml::kErrorNotSupported;
  *mhz = 1410;
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetTemperature(nvml::Device, int sensor, unsigned* c) {
  if (sensor != nvml::kTemperatureGpu) return nvml::kErrorNotSupported;
  *c = 60;
  return nvml::kSuccess;
}

}  // extern "C"
