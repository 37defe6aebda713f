// What the CUDA caching allocator says about one device after a step (device.h reads it; steps.csv
// and the summary report it). Torch-free, private to train.
#pragma once

#include <cstdint>

namespace llmprof::train {

// The CUDA caching allocator's counters for one device (PyTorch's torch.cuda.memory_stats).
struct DeviceMemory {
  int64_t allocated_bytes = 0;       // live tensors now
  int64_t peak_allocated_bytes = 0;  // since the last reset
  int64_t reserved_bytes = 0;        // held from the driver (allocated + cached free blocks)
  int64_t peak_reserved_bytes = 0;
  int64_t alloc_retries = 0;         // cudaMalloc failures that freed the cache and retried
  int64_t ooms = 0;
  // Reserved but not allocated: the cache's free blocks, fragmentation near an OOM.
  int64_t free_reserved_bytes() const { return reserved_bytes - allocated_bytes; }
};

}  // namespace llmprof::train
