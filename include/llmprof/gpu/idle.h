// Why the GPU sat idle during a step. Busy time is the union of the device's kernel, memcpy and
// memset intervals inside the step window (overlapping streams count once); idle time is the
// rest, cut into gaps, and each gap gets one cause, checked in this order:
//   sync_bound  a host synchronization overlaps the gap: a CUPTI SyncRecord that blocks the host
//               (event / stream / context synchronize) or a cudaDeviceSynchronize,
//               cudaStreamSynchronize, cudaEventSynchronize runtime call. The host waited for the
//               queue to drain, so after it returns the GPU waits for the host to refill it: the
//               whole gap is the price of the sync (a loss.item() or a .cpu() in the step).
//   data_bound  the work that ends the gap is a host-to-device copy and the gap overlaps a CPU
//               data phase (the input pipeline): the GPU waited for the next batch.
//   host_bound  the rest: the GPU ran ahead of a host that could not launch fast enough (Python
//               or framework overhead, small kernels, launch latency).
// A cause is the gap's whole length: gaps are short, and the first cause explains the gap.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "llmprof/gpu/kernel_record.h"

namespace llmprof::gpu {

// Causes, stable values and names.
enum class IdleCause : uint8_t { kHost = 0, kData = 1, kSync = 2 };
// "host_bound", "data_bound", "sync_bound".
std::string_view idle_cause_name(IdleCause cause);

// A host-side interval (a data phase of the step), on the profiler's clock.
struct HostInterval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct IdleGap {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  IdleCause cause = IdleCause::kHost;
};

// One step's GPU busy/idle breakdown: busy + idle = window; host + data + sync = idle.
struct StepIdle {
  int64_t step = 0;
  double window_ms = 0;
  double busy_ms = 0;
  double idle_ms = 0;
  double host_bound_ms = 0;
  double data_bound_ms = 0;
  double sync_bound_ms = 0;
  std::vector<IdleGap> gaps;  // in time order
};

// Analyses the window [start_ns, end_ns) of one step on one device. data_phases: the CPU data
// phase intervals (any order; those outside the window are ignored).
StepIdle analyze_idle(int64_t step,
                      int64_t start_ns,
                      int64_t end_ns,
                      const GpuRecords& gpu,
                      const std::vector<HostInterval>& data_phases,
                      int32_t device = 0);

}  // namespace llmprof::gpu
