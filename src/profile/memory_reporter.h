// Private to the tracer: memory attribution. c10 calls reportMemoryUsage on every CPU allocation
// and free while a MemoryReporter is installed as the thread's PROFILER_STATE debug info (the
// mechanism torch.profiler's profile_memory uses): phase peaks, bytes per op and per scope.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

namespace llmprof::profile::detail {

// LibTorch 2.x passes the allocator totals as size_t, 1.13 as int64_t.
#if TORCH_VERSION_MAJOR >= 2
using AllocatorTotal = size_t;
#else
using AllocatorTotal = int64_t;
#endif

class MemoryReporter : public c10::MemoryReportingInfoBase {
 public:
  bool memoryProfilingEnabled() const override { return true; }
  void reportOutOfMemory(int64_t, AllocatorTotal, AllocatorTotal, c10::Device) override {}
  // In the timed step, per allocation (alloc_size > 0) and free: no lock, no allocation.
  void reportMemoryUsage(void* ptr, int64_t alloc_size, AllocatorTotal total, AllocatorTotal,
                         c10::Device) override;

  // Per scope event: bytes allocated inside it, and live bytes at the end of the forward.
  void reset_scope_tables(size_t n);
  // Copies the live bytes of scope events [first, last) (this step's) as "saved for backward".
  void snapshot_saved(size_t first, size_t last) {
    last = std::min(last, scope_live_.size());
    for (size_t i = first; i < last; ++i) scope_saved_[i] = scope_live_[i];
  }
  void set_forward(bool on) { in_forward_ = on; }
  // The reporter this one is installed over (llmprof plan's memory probe), told of every report
  // too while it asks for them: a recorded window hides no other participant's memory. Null:
  // none. It must outlive this one's installation (it is installed for longer, under it).
  void set_next(c10::MemoryReportingInfoBase* next) { next_ = next; }
  int64_t take_phase_peak() { return phase_peak_.exchange(allocated_.load()); }
  int64_t allocated() const { return allocated_.load(std::memory_order_relaxed); }
  const std::vector<int64_t>& scope_alloc() const { return scope_alloc_; }
  const std::vector<int64_t>& scope_saved() const { return scope_saved_; }

 private:
  struct Entry {
    void* ptr = nullptr;
    int32_t scope = -1;
    int64_t bytes = 0;
  };
  static constexpr size_t kTableSize = 1 << 16;

  // Live bytes per scope: an allocation in the forward enters the table under the innermost
  // open scope, its free takes the bytes back out (open addressing by pointer). Inline: defined
  // beside its one caller, reportMemoryUsage.
  inline void track_scope(void* ptr, int64_t size);

  std::atomic<int64_t> phase_peak_{0};
  std::atomic<int64_t> allocated_{0};
  std::vector<int64_t> scope_alloc_, scope_live_, scope_saved_;
  std::vector<Entry> table_;
  bool in_forward_ = false;
  c10::MemoryReportingInfoBase* next_ = nullptr;
};

// While memory reporting is on, c10's CPU allocator warns (through glog, at most once a second)
// about every free of a block allocated before recording began: parameters, optimizer state. That
// is expected here and not the user's concern, so glog's threshold is raised to errors during the
// window. The flag is looked up at run time: builds of LibTorch without glog simply lack it.
class QuietAllocatorWarnings {
 public:
  QuietAllocatorWarnings();
  ~QuietAllocatorWarnings();
  QuietAllocatorWarnings(const QuietAllocatorWarnings&) = delete;
  QuietAllocatorWarnings& operator=(const QuietAllocatorWarnings&) = delete;

 private:
  int32_t* level_;
  int32_t saved_ = 0;
};

}  // namespace llmprof::profile::detail
