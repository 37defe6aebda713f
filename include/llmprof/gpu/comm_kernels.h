// Which GPU kernels are communication, found through the collective that launched them, not
// through their names: NCCL renames its kernels across releases (ncclKernel_..., ncclDevKernel_...)
// and a name prefix misses them (HolisticTraceAnalysis#122, #360). A kernel's correlation id
// names the runtime call that launched it (correlate.h); a call made on the issuing thread while
// a collective was being issued (between the issue's start and its return) belongs to it.
#pragma once

#include <cstdint>
#include <vector>

#include "llmprof/gpu/kernel_record.h"

namespace llmprof::gpu {

// A collective's issue on the host: the call into the process group (c10d's allreduce), which
// launches the backend's kernels before it returns.
struct CollectiveIssue {
  int64_t start_ns = 0;     // the call began
  int64_t end_ns = 0;       // the call returned
  uint64_t thread_id = 0;   // the issuing OS thread; 0: any thread (one issuing thread)
};

// For each kernel of gpu (parallel to gpu.kernels): the index of the collective in `issues` that
// launched it, or -1 for compute (its launching call is unknown or outside every issue). Issues
// must not overlap on one thread. O((K + R) log C) for K kernels, R runtime calls, C issues.
std::vector<int32_t> collective_of_kernels(const GpuRecords& gpu,
                                           const std::vector<CollectiveIssue>& issues);

}  // namespace llmprof::gpu
