// The CUDA caching allocator's statistics (llmprof/device/memory.h): the one place llmprof reads
// them. A build without CUDA has no caching allocator to read.
#include "llmprof/config/enums.h"
#include "llmprof/device/memory.h"

#if defined(LLMPROF_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace llmprof::device {

#if defined(LLMPROF_WITH_CUDA)

namespace {

c10::DeviceIndex ordinal(const config::Device& device) {
  return static_cast<c10::DeviceIndex>(device.index);
}

}  // namespace

std::optional<DeviceMemory> allocator_memory(const config::Device& device) {
  if (!device.is_cuda()) return std::nullopt;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(ordinal(device));
  constexpr size_t kAggregate = 0;  // StatType::AGGREGATE: all pools together
  DeviceMemory m;
  m.allocated_bytes = stats.allocated_bytes[kAggregate].current;
  m.peak_allocated_bytes = stats.allocated_bytes[kAggregate].peak;
  m.reserved_bytes = stats.reserved_bytes[kAggregate].current;
  m.peak_reserved_bytes = stats.reserved_bytes[kAggregate].peak;
  m.alloc_retries = stats.num_alloc_retries;
  m.ooms = stats.num_ooms;
  return m;
}

void reset_allocator_peak(const config::Device& device) {
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(ordinal(device));
}

void set_allocator_fraction(const config::Device& device, double fraction) {
  if (device.is_cuda())
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, ordinal(device));
}

#else  // no CUDA: no caching allocator

std::optional<DeviceMemory> allocator_memory(const config::Device& /*device*/) {
  return std::nullopt;
}
void reset_allocator_peak(const config::Device& /*device*/) {}
void set_allocator_fraction(const config::Device& /*device*/, double /*fraction*/) {}

#endif

}  // namespace llmprof::device
