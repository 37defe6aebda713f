// Can this llmprof train on a CUDA device, and if not, why: the answer behind `device: cuda`.
// Torch-free: what LibTorch was built with is fixed at configure time (LLMPROF_WITH_CUDA), and
// the device is probed through the CUDA runtime where the build has it.
#pragma once

#include <string>
#include <string_view>

namespace llmprof::gpu {

struct CudaAvailability {
  bool available = false;
  std::string reason;    // why not; empty when available
  int device_count = 0;  // devices the CUDA runtime sees
};

// The full answer: LibTorch built with CUDA, then the CUDA runtime's device count.
CudaAvailability cuda_availability();

// The CUDA runtime's answer alone (cudaGetDeviceCount), whatever LibTorch was built with;
// unavailable with the reason when this build has no CUDA runtime.
CudaAvailability cuda_runtime_probe();

// The decision from its inputs, for tests and both functions above. runtime_error: the
// cudaError_t of cudaGetDeviceCount (0 = success), error_name / error_text its
// cudaGetErrorName / cudaGetErrorString; torch_version may be empty.
CudaAvailability decide_cuda_availability(bool torch_has_cuda,
                                          std::string_view torch_version,
                                          bool runtime_built,
                                          int runtime_error,
                                          std::string_view error_name,
                                          std::string_view error_text,
                                          int device_count);

// What this build was configured with.
bool built_with_cuda_torch();     // LibTorch has CUDA (LLMPROF_WITH_CUDA)
bool built_with_cuda_runtime();   // CUDA events and the device probe (LLMPROF_HAVE_CUDART)
bool built_with_cupti();          // CUPTI activity collection (LLMPROF_HAVE_CUPTI)
bool built_with_cupti_headers();  // CUPTI record conversion (LLMPROF_HAVE_CUPTI_HEADERS)

}  // namespace llmprof::gpu
