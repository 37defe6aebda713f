// A GPU's properties as Kineto writes them in a trace's top-level "deviceProperties" (HTA reads
// them for its kernel and occupancy views), from cudaGetDeviceProperties.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace llmprof::gpu {

struct DeviceProperties {
  int id = 0;
  std::string name;
  int64_t total_global_mem = 0;
  int compute_major = 0, compute_minor = 0;
  int max_threads_per_block = 0, max_threads_per_sm = 0;
  int regs_per_block = 0, regs_per_sm = 0;
  int warp_size = 0;
  int64_t shared_mem_per_block = 0, shared_mem_per_sm = 0, shared_mem_per_block_optin = 0;
  int num_sms = 0;
};

// cuda:device's properties; nullopt in a build without the CUDA runtime or when the runtime
// cannot read them (no driver, no such device).
std::optional<DeviceProperties> query_device_properties(int device);

// One object of "deviceProperties", in Kineto's field names (id, name, totalGlobalMem,
// computeMajor, computeMinor, maxThreadsPerBlock, maxThreadsPerMultiprocessor, regsPerBlock,
// regsPerMultiprocessor, warpSize, sharedMemPerBlock, sharedMemPerMultiprocessor,
// numSms, sharedMemPerBlockOptin).
std::string device_properties_json(const DeviceProperties& p);

}  // namespace llmprof::gpu
