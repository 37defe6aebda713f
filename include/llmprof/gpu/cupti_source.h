// Kernel, copy, memset, synchronization and runtime-call records from CUPTI's activity API, for
// the schedule's recorded steps. CUPTI writes records into the fixed ActivityBufferPool from its
// own threads; collect() parses completed buffers after the window. CUPTI's buffer callbacks are
// process-wide, so one source may be started at a time. CUPTI-free header; without CUPTI in the
// build, available() says so and start() throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "llmprof/gpu/activity_source.h"
#include "llmprof/gpu/buffer_pool.h"
#include "llmprof/gpu/cuda_availability.h"
#include "llmprof/gpu/kernel_record.h"

namespace llmprof::gpu {

struct CuptiOptions {
  size_t num_buffers = 16;  // 16 x 4 MiB = 64 MiB, allocated once
  size_t buffer_bytes = ActivityBufferPool::kDefaultBufferBytes;
  bool runtime_api = true;  // CUPTI_ACTIVITY_KIND_RUNTIME: needed for correlation with CPU ops
  bool synchronization = true;
};

class CuptiActivitySource : public ActivitySource {
 public:
  // Whether CUPTI collection is built in and a CUDA device is there; reason when not.
  static CudaAvailability available();

  explicit CuptiActivitySource(const CuptiOptions& options = {});
  ~CuptiActivitySource() override;
  CuptiActivitySource(const CuptiActivitySource&) = delete;
  CuptiActivitySource& operator=(const CuptiActivitySource&) = delete;

  // Registers the buffer callbacks and profiler clock (llmprof::now_ns) and enables the activity
  // kinds. Between steps. Throws GpuError.
  void start() override;
  // Disables the kinds and flushes every buffer CUPTI still holds. Between steps.
  void stop() override;
  // Parses completed buffers into out (appending) and returns them to the pool; returns records
  // added. Logs the pool's drop warning once. Off the hot path.
  size_t collect(GpuRecords& out) override;

  int64_t dropped_buffers() const;  // buffer requests the full pool refused
  int64_t dropped_records() const override;  // records CUPTI reports dropped

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmprof::gpu
