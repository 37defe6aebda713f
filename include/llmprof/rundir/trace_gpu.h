// The GPU half of the one trace writer (trace.json, write_trace in tables.h): Chrome trace events
// for GPU activity, in Kineto's
// categories and argument names, which Holistic Trace Analysis reads: "kernel", "gpu_memcpy" and
// "gpu_memset" slices on pid = the device, tid = the stream, with args "stream", "correlation",
// "External id" (the launching op's, as trace.cpp numbers ops), "device", "grid", "block",
// "registers per thread", "shared memory"; the CUDA runtime and driver launch calls as
// "cuda_runtime" slices on their host thread's track with "correlation", "cbid" and
// "External id"; and a flow arrow from each launching call to the work it enqueued. Each event
// is one JSON object's text, ready to join into the "traceEvents" array.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "llmprof/gpu/correlate.h"
#include "llmprof/gpu/kernel_record.h"

namespace llmprof::rundir {

struct GpuTraceOptions {
  int64_t origin_ns = 0;  // the trace's time zero (trace.cpp: the first step's start)
  int64_t cpu_pid = 1;    // the training process, as trace.cpp writes it (its OS pid)
  // OS thread id -> trace tid of the host thread's existing track (trace.cpp: thread index + 1).
  // Threads not in the map get their own track, tid kFirstExtraTid + k, named "cuda thread <id>".
  std::unordered_map<uint64_t, int> cpu_tids;
  // GPU n is trace process gpu_pid_base + n (Kineto: the device index; the name "GPU n" is a
  // process_name record; streams are tids named "stream <id>").
  int gpu_pid_base = 0;
  // The "External id" of ops[i] (trace.cpp writes i + 1 on the op's own slice); empty: i + 1.
  std::vector<int64_t> external_ids;
  // Extra args of kernels (parallel to GpuRecords::kernels; empty or "" for none), e.g. the
  // collective args Kineto gives communication kernels (comm_kernels.h finds them).
  std::vector<std::string> kernel_args;
  bool runtime_slices = true;  // the CUDA runtime calls as slices on host tracks
  bool flows = true;           // launch -> kernel / copy arrows
};

inline constexpr int kFirstExtraTid = 1000;
// Flow ids are kFlowIdBase + correlation id: above trace.cpp's fwd->bwd ids, (step << 32) ^ seq,
// for runs below 2^20 steps, and below 2^53 so JavaScript viewers keep them exact.
inline constexpr int64_t kFlowIdBase = int64_t{1} << 52;

// The events, metadata first. ops and correlation label kernels with their owning op and scope.
std::vector<std::string> gpu_trace_events(const gpu::GpuRecords& gpu,
                                          const std::vector<gpu::CpuOpInterval>& ops,
                                          const gpu::Correlation& correlation,
                                          const GpuTraceOptions& options);

}  // namespace llmprof::rundir
