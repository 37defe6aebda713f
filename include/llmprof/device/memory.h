// What a device's caching allocator says about its memory: the one reader of the CUDA caching
// allocator's statistics, for the step rows (DeviceContext::memory), the summary and plan's
// memory probe. The CPU has no caching allocator (c10's CPU allocator keeps no books: profile's
// memory reporter counts it). Torch-free header; the reads link the device's torch companion.
#pragma once

#include <cstdint>
#include <optional>

namespace llmprof::config {
struct Device;
}

namespace llmprof::device {

// The CUDA caching allocator's counters for one device (PyTorch's torch.cuda.memory_stats,
// all pools together).
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

// The caching allocator's counters of device now (host-side books, no sync); nullopt on a device
// without one (capabilities().caching_allocator false) or in a build without CUDA.
std::optional<DeviceMemory> allocator_memory(const config::Device& device);

// Starts a new peak window of the device's caching allocator; nothing without one.
void reset_allocator_peak(const config::Device& device);

// Caps this process's share of the device's memory at fraction (0 < f <= 1), as
// torch.cuda.set_per_process_memory_fraction; nothing without a caching allocator.
void set_allocator_fraction(const config::Device& device, double fraction);

}  // namespace llmprof::device
