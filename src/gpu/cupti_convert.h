// CUPTI activity records -> the plain records of kernel_record.h. Internal: it needs CUPTI's
// headers (CUDA 13's cupti_activity.h: CUpti_ActivityKernel10, Memcpy6, Memset4,
// Synchronization2, API); CMake defines LLMPROF_HAVE_CUPTI_HEADERS where it found them.
#pragma once

#if defined(LLMPROF_HAVE_CUPTI_HEADERS)

#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <cstdint>
#include <string>

#include "llmprof/gpu/kernel_record.h"

namespace llmprof::gpu {

// Name of a CUDA runtime API callback id that runtime_cbid_name does not know (the collector
// asks cuptiGetCallbackName); an empty result keeps runtime_cbid_name's "cudaRuntimeCbid<n>".
using RuntimeNameFn = std::string (*)(uint32_t cbid);

// Appends the plain record of one activity record to out. Handles CONCURRENT_KERNEL and KERNEL,
// MEMCPY, MEMSET, SYNCHRONIZATION, RUNTIME and DRIVER's launches; returns false (and appends
// nothing) for others, and for a device record without timestamps (counted in out.incomplete).
bool convert_activity(const CUpti_Activity& record,
                      GpuRecords& out,
                      RuntimeNameFn runtime_name = nullptr);

// Names of the runtime callback ids correlation and idle analysis care about (launches, copies,
// memsets, synchronizations), without CUPTI's version suffix: 211 -> "cudaLaunchKernel".
// Others: "cudaRuntimeCbid<n>".
std::string runtime_cbid_name(uint32_t cbid);

}  // namespace llmprof::gpu

#endif  // LLMPROF_HAVE_CUPTI_HEADERS
