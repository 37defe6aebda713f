// Who launched each piece of GPU work. CUPTI gives every kernel, memcpy and memset the correlation
// id of the runtime call that enqueued it (cudaLaunchKernel, cudaMemcpyAsync, ...); that call ran
// on a host thread at a known time, and the innermost CPU op open on that thread then (the aten
// op, inside its module scope) owns the work. Kineto links them the same way, through CUPTI's
// correlation ids.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "llmprof/gpu/kernel_record.h"

namespace llmprof::gpu {

// Owner name of work no CPU op can be found for (the same label as modules.csv's).
inline constexpr std::string_view kUnattributed = "(unattributed)";

// Owner of one GPU activity, as indexes.
struct Attribution {
  int32_t runtime = -1;  // into GpuRecords::runtime; -1: no runtime record has the correlation id
  int32_t op = -1;       // into the CPU ops; -1: no op was open on the launching thread
};

struct Correlation {
  std::vector<Attribution> kernels;  // parallel to GpuRecords::kernels
  std::vector<Attribution> memcpys;  // parallel to GpuRecords::memcpys
  std::vector<Attribution> memsets;  // parallel to GpuRecords::memsets
  int64_t without_launch = 0;        // activities whose correlation id matches no runtime record
  int64_t without_op = 0;            // activities launched while no CPU op was open on the thread
};

// Correlates every kernel, memcpy and memset with its runtime call and the innermost CPU op open
// on that call's thread at the call's start. Ops must nest properly per thread (as RecordFunction
// ranges do). O((G + R + P) log P) for G activities, R runtime calls, P ops.
Correlation correlate(const GpuRecords& gpu, const std::vector<CpuOpInterval>& ops);

// The owning op's name, or kUnattributed.
std::string_view owner_op(const Attribution& a, const std::vector<CpuOpInterval>& ops);
// The owning op's module scope, or kUnattributed when there is no op or the op is outside scopes.
std::string_view owner_scope(const Attribution& a, const std::vector<CpuOpInterval>& ops);

}  // namespace llmprof::gpu
