// The error a CUDA runtime or CUPTI call throws: the call, the library's error name and text.
#pragma once

#include <string>

#include "llmprof/error.h"

namespace llmprof::gpu {

// A failed CUDA runtime / CUPTI call at run time (exit code 1), e.g.
// "cudaEventCreateWithFlags failed: cudaErrorNoDevice (no CUDA-capable device is detected)".
class GpuError : public Error {
 public:
  explicit GpuError(const std::string& what) : Error(what, kExitRuntime) {}
};

}  // namespace llmprof::gpu
