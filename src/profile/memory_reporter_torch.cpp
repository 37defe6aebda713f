// The tracer's memory reporter and the glog guard of its window (memory_reporter.h).
#include "memory_reporter.h"

#include <dlfcn.h>

#include "thread_buffer.h"

namespace llmprof::profile::detail {

void MemoryReporter::reset_scope_tables(size_t n) {
  scope_alloc_.assign(n, 0);
  scope_live_.assign(n, 0);
  scope_saved_.assign(n, 0);
  table_.assign(kTableSize, Entry{});
}

inline void MemoryReporter::track_scope(void* ptr, int64_t size) {
  const size_t mask = kTableSize - 1;
  size_t i = (reinterpret_cast<uintptr_t>(ptr) >> 4) & mask;
  if (size > 0) {
    const int32_t scope = g_tracer.scopes != nullptr ? g_tracer.scopes->current() : -1;
    if (!in_forward_ || scope < 0 || static_cast<size_t>(scope) >= scope_alloc_.size()) return;
    scope_alloc_[scope] += size;
    scope_live_[scope] += size;
    for (size_t probes = 0; probes < kTableSize; ++probes, i = (i + 1) & mask) {
      if (table_[i].ptr == nullptr) {
        table_[i] = {ptr, scope, size};
        return;
      }
    }
    return;  // table full: the bytes stay counted as live (an over-estimate, rare)
  }
  for (size_t probes = 0; probes < kTableSize; ++probes, i = (i + 1) & mask) {
    if (table_[i].ptr == nullptr) return;  // not tracked
    if (table_[i].ptr == ptr) {
      scope_live_[table_[i].scope] -= table_[i].bytes;
      // Backward-shift deletion keeps the probe chains intact.
      size_t hole = i;
      for (size_t j = (i + 1) & mask; table_[j].ptr != nullptr; j = (j + 1) & mask) {
        const size_t home = (reinterpret_cast<uintptr_t>(table_[j].ptr) >> 4) & mask;
        if (((j - home) & mask) >= ((j - hole) & mask)) {
          table_[hole] = table_[j];
          hole = j;
        }
      }
      table_[hole] = Entry{};
      return;
    }
  }
}

void MemoryReporter::reportMemoryUsage(void* ptr,
                                       int64_t alloc_size,
                                       AllocatorTotal total,
                                       AllocatorTotal total_reserved,
                                       c10::Device device) {
  if (next_ != nullptr && next_->memoryProfilingEnabled()) {
    next_->reportMemoryUsage(ptr, alloc_size, total, total_reserved, device);
  }
  const auto total_allocated = static_cast<int64_t>(total);
  int64_t peak = phase_peak_.load(std::memory_order_relaxed);
  while (total_allocated > peak &&
         !phase_peak_.compare_exchange_weak(peak, total_allocated, std::memory_order_relaxed)) {
  }
  allocated_.store(total_allocated, std::memory_order_relaxed);
  ThreadBuffer* tb = claimed_buffer();
  if (tb == nullptr) return;
  ++tb->step_memory_reports;
  if (tb->index != 0) return;  // attribution on the loop's thread only
  if (alloc_size > 0 && tb->depth > 0 && tb->depth <= kMaxDepth) {
    const int32_t top = tb->stack[tb->depth - 1];
    if (top >= 0) tb->ops[static_cast<size_t>(top)].alloc_bytes += alloc_size;
  }
  track_scope(ptr, alloc_size);
}

QuietAllocatorWarnings::QuietAllocatorWarnings()
    : level_(static_cast<int32_t*>(dlsym(RTLD_DEFAULT, "_ZN3fLI17FLAGS_minloglevelE"))) {
  if (level_ != nullptr) {
    saved_ = *level_;
    *level_ = std::max(saved_, 2);  // glog: 0 INFO, 1 WARNING, 2 ERROR
  }
}

QuietAllocatorWarnings::~QuietAllocatorWarnings() {
  if (level_ != nullptr) *level_ = saved_;
}

}  // namespace llmprof::profile::detail
