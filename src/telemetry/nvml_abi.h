// The few NVML types, constants and function signatures llmprof uses, declared from NVML's
// documented C ABI (nvml.h, NVIDIA Management Library API reference) so the build needs neither
// the CUDA toolkit nor the driver: libnvidia-ml.so.1 is dlopen'ed at run time and each function
// looked up by name. Private to src/telemetry; also compiled into the tests' fake library.
#pragma once

namespace llmprof::telemetry::nvml {

// nvmlReturn_t is a C enum: an int in the ABI.
using Return = int;
inline constexpr Return kSuccess = 0;            // NVML_SUCCESS
inline constexpr Return kErrorNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED

// nvmlClockType_t / nvmlTemperatureSensors_t values used.
inline constexpr int kClockSm = 1;         // NVML_CLOCK_SM
inline constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

inline constexpr unsigned kDeviceNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

// nvmlDevice_t: an opaque handle.
struct DeviceSt;
using Device = DeviceSt*;

// nvmlUtilization_t: percent of the last sample period the GPU / memory was busy.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlMemory_t (v1): bytes.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

extern "C" {
using InitFn = Return (*)();                                         // nvmlInit_v2
using ShutdownFn = Return (*)();                                     // nvmlShutdown
using ErrorStringFn = const char* (*)(Return);                       // nvmlErrorString
using DeviceGetCountFn = Return (*)(unsigned int*);                  // nvmlDeviceGetCount_v2
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);  // ..._v2
using DeviceGetNameFn = Return (*)(Device, char*, unsigned int);
using DeviceGetPowerUsageFn = Return (*)(Device, unsigned int*);                    // milliwatts
using DeviceGetTotalEnergyConsumptionFn = Return (*)(Device, unsigned long long*);  // mJ, Volta+
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetClockInfoFn = Return (*)(Device, int, unsigned int*);    // MHz
using DeviceGetTemperatureFn = Return (*)(Device, int, unsigned int*);  // degrees C
}

}  // namespace llmprof::telemetry::nvml
