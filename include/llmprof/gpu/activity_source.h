// Where a recorded window's GPU activity records come from: CUPTI on a CUDA device
// (CuptiActivitySource, cupti_source.h), or, in tests, records made up or replayed from a fixture.
// The deep profiler starts a source with each recorded window and collects it after the window.
#pragma once

#include <cstddef>
#include <cstdint>

#include "llmprof/gpu/kernel_record.h"

namespace llmprof::gpu {

class ActivitySource {
 public:
  virtual ~ActivitySource() = default;
  // Between steps, at the start of a window. Throws GpuError.
  virtual void start() = 0;
  // Between steps, at its end: no more records; every buffered one becomes collectable.
  virtual void stop() = 0;
  // Appends the records gathered since start() to out; returns how many.
  virtual size_t collect(GpuRecords& out) = 0;
  virtual int64_t dropped_records() const { return 0; }
};

}  // namespace llmprof::gpu
