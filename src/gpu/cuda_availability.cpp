// cuda_availability(): configure-time facts plus, where the build has the CUDA runtime, a probe.
#include "llmprof/gpu/cuda_availability.h"

#include <fmt/format.h>

#if defined(LLMPROF_HAVE_CUDART)
#include <cuda_runtime_api.h>
#endif

#ifndef LLMPROF_TORCH_VERSION
#define LLMPROF_TORCH_VERSION ""
#endif

namespace llmprof::gpu {

bool built_with_cuda_torch() {
#if defined(LLMPROF_WITH_CUDA)
  return true;
#else
  return false;
#endif
}

bool built_with_cuda_runtime() {
#if defined(LLMPROF_HAVE_CUDART)
  return true;
#else
  return false;
#endif
}

bool built_with_cupti() {
#if defined(LLMPROF_HAVE_CUPTI)
  return true;
#else
  return false;
#endif
}

bool built_with_cupti_headers() {
#if defined(LLMPROF_HAVE_CUPTI_HEADERS)
  return true;
#else
  return false;
#endif
}

CudaAvailability decide_cuda_availability(bool torch_has_cuda,
                                          std::string_view torch_version,
                                          bool runtime_built,
                                          int runtime_error,
                                          std::string_view error_name,
                                          std::string_view error_text,
                                          int device_count) {
  CudaAvailability a;
  const std::string version = torch_version.empty() ? "" : " " + std::string(torch_version);
  if (!torch_has_cuda) {
    a.reason = fmt::format(
        "this llmprof was built against CPU-only LibTorch{}; rebuild with scripts/build_gpu.sh on "
        "a CUDA machine (it builds against the CUDA LibTorch of an installed PyTorch)",
        version);
    return a;
  }
  if (!runtime_built) {
    a.reason =
        "this llmprof was built without the CUDA toolkit (find_package(CUDAToolkit) found "
        "none); rebuild with scripts/build_gpu.sh";
    return a;
  }
  if (runtime_error != 0) {
    a.reason = fmt::format(
        "CUDA runtime: cudaGetDeviceCount failed: {} ({}); check nvidia-smi, "
        "the driver and CUDA_VISIBLE_DEVICES",
        error_name, error_text);
    return a;
  }
  a.device_count = device_count;
  if (device_count <= 0) {
    a.reason = "CUDA runtime: no CUDA device is visible (check CUDA_VISIBLE_DEVICES)";
    return a;
  }
  a.available = true;
  return a;
}

CudaAvailability cuda_runtime_probe() {
#if defined(LLMPROF_HAVE_CUDART)
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) cudaGetLastError();  // clear the sticky-free error for later calls
  return decide_cuda_availability(true, "", true, static_cast<int>(status),
                                  cudaGetErrorName(status), cudaGetErrorString(status), count);
#else
  return decide_cuda_availability(true, "", false, 0, "", "", 0);
#endif
}

CudaAvailability cuda_availability() {
  if (!built_with_cuda_torch()) {
    return decide_cuda_availability(false, LLMPROF_TORCH_VERSION, built_with_cuda_runtime(), 0, "",
                                    "", 0);
  }
  return cuda_runtime_probe();
}

}  // namespace llmprof::gpu
