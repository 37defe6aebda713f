#include "llmprof/gpu/device_properties.h"

#include <fmt/format.h>

#if defined(LLMPROF_HAVE_CUDART)
#include <cuda_runtime_api.h>
#endif

namespace llmprof::gpu {

std::optional<DeviceProperties> query_device_properties(int device) {
#if defined(LLMPROF_HAVE_CUDART)
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so that later calls do not report it
    return std::nullopt;
  }
  DeviceProperties p;
  p.id = device;
  p.name = prop.name;
  p.total_global_mem = static_cast<int64_t>(prop.totalGlobalMem);
  p.compute_major = prop.major;
  p.compute_minor = prop.minor;
  p.max_threads_per_block = prop.maxThreadsPerBlock;
  p.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  p.regs_per_block = prop.regsPerBlock;
  p.regs_per_sm = prop.regsPerMultiprocessor;
  p.warp_size = prop.warpSize;
  p.shared_mem_per_block = static_cast<int64_t>(prop.sharedMemPerBlock);
  p.shared_mem_per_sm = static_cast<int64_t>(prop.sharedMemPerMultiprocessor);
  p.shared_mem_per_block_optin = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  p.num_sms = prop.multiProcessorCount;
  return p;
#else
  (void)device;
  return std::nullopt;
#endif
}

std::string device_properties_json(const DeviceProperties& p) {
  std::string name;
  for (char c : p.name) {
    if (c == '"' || c == '\\') name.push_back('\\');
    if (static_cast<unsigned char>(c) >= 0x20) name.push_back(c);
  }
  return fmt::format(
      R"({{"id": {}, "name": "{}", "totalGlobalMem": {}, "computeMajor": {}, "computeMinor": {}, )"
      R"("maxThreadsPerBlock": {}, "maxThreadsPerMultiprocessor": {}, "regsPerBlock": {}, )"
      R"("regsPerMultiprocessor": {}, "warpSize": {}, "sharedMemPerBlock": {}, )"
      R"("sharedMemPerMultiprocessor": {}, "numSms": {}, "sharedMemPerBlockOptin": {}}})",
      p.id, name, p.total_global_mem, p.compute_major, p.compute_minor, p.max_threads_per_block,
      p.max_threads_per_sm, p.regs_per_block, p.regs_per_sm, p.warp_size, p.shared_mem_per_block,
      p.shared_mem_per_sm, p.num_sms, p.shared_mem_per_block_optin);
}

}  // namespace llmprof::gpu
