// Private to the tracer: the per-thread event buffers its RecordFunction callbacks write, and the
// state of the single active tracer that the callbacks and the memory reporter read. Torch-free.
// The state and the thread-local pointers are inline variables, constant-initialized: every file
// of the tracer reads the same ones with the plain thread-local access of a file-local variable
// (no TLS wrapper call, no lock) on the per-op and per-allocation paths.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "llmprof/profile/events.h"
#include "llmprof/profile/scope.h"

namespace llmprof::profile {
struct TraceData;
}  // namespace llmprof::profile

namespace llmprof::profile::detail {

constexpr int kMaxThreads = 16;
constexpr int kMaxDepth = 64;
constexpr size_t kNameSlots = 4096;  // NameTable slots: per-name tables have one entry each

// Per op name, classified on its first call: what the callback does with it.
enum NameClass : uint8_t { kUnclassified = 0, kPlain, kModelled, kView };

struct ThreadBuffer {
  // Op names (FUNCTION scope) are static schema strings: cache id by pointer, skipping the hash.
  static constexpr size_t kPtrCache = 1024;
  std::array<const char*, kPtrCache> ptr_key{};
  std::array<uint32_t, kPtrCache> ptr_id{};
  std::vector<OpEvent> ops;
  std::vector<ShapeRecord> shapes;
  std::vector<int32_t> parents;
  std::vector<uint8_t> name_class;  // per name id: NameClass
  // Untimed view/metadata calls, per name id: in the step in flight and in kept steps; and per
  // name id of the op they ran directly inside.
  std::vector<int64_t> step_untimed, untimed, step_views_inside, views_inside;
  std::array<bool, kMaxDepth> untimed_at{};  // stack entry of an untimed call
  // View sampling (ViewSampling): in a read step, each view call inside a timed op (its name id,
  // the enclosing event); per name id, whether calls hide their views in the steps between read
  // steps; the read step's view calls inside those, per (op name id, view name id).
  struct ViewCall {
    uint32_t name_id;
    int32_t parent;
  };
  struct HiddenViews {
    uint32_t parent, view;
    int64_t count;
    bool operator==(const HiddenViews& o) const {
      return parent == o.parent && view == o.view && count == o.count;
    }
  };
  std::vector<ViewCall> view_log;
  bool view_log_full = false;
  std::vector<uint8_t> hides_views;
  std::vector<HiddenViews> ref_hidden;
  std::array<bool, kMaxDepth> hid_at{};  // stack entry of a call that switched RecordFunction off
  int64_t step_hidden_calls = 0;
  int64_t step_memory_reports = 0;  // c10 allocations and frees reported on this thread
  NameTable names;
  std::array<int32_t, kMaxDepth> stack{};  // event index, -1 = dropped
  // Shape sampling: the events of the step in flight start at step_first; those of the last step
  // that read shapes are [ref_first, ref_first + ref_count).
  size_t step_first = 0, ref_first = 0, ref_count = 0;
  size_t step_first_shape = 0;
  int depth = 0;
  int64_t dropped = 0;
  uint16_t index = 0;
  uint64_t os_tid = 0;  // the thread that claimed it this window (gettid): CUPTI's thread ids
};

// The tracer's buffers, one per thread slot (TracerState::buffers points into them).
using Buffers = std::vector<std::unique_ptr<ThreadBuffer>>;

// Reserves a buffer for up to max_events events (shape records for a quarter of them when
// `ops`; a view log when views are counted, not timed). Between windows: it allocates.
void reserve_buffer(ThreadBuffer& tb, size_t max_events, bool ops, bool count_views);
// Appends a buffer's events, shapes, parents, untimed counts and dropped events to `d` (one more
// thread), its names re-interned into `names` (the merged list), shape and parent indices
// offset; a buffer that recorded nothing adds nothing.
void merge_buffer(const ThreadBuffer& tb, NameTable& names, TraceData& d);
// Empties a buffer for the next window; it keeps its capacity and resident pages.
void clear_buffer(ThreadBuffer& tb);

// Shared state of the single active tracer, read by the static callbacks.
struct TracerState {
  std::array<ThreadBuffer*, kMaxThreads> buffers{};
  std::atomic<int> num_buffers{0};
  std::atomic<int32_t> step{0};
  std::atomic<uint8_t> phase{0};
  std::atomic<bool> active{false};
  std::atomic<int> generation{0};  // bumped per window: thread-local pointers of old ones expire
  bool record_shapes = false;
  bool record_view_ops = false;
  bool log_views = false;   // this step reads: view calls inside timed ops are logged
  bool hide_views = false;  // this step does not: ops that ran only views hide them
  ScopeRecorder* scopes = nullptr;
};
inline TracerState g_tracer;
inline thread_local ThreadBuffer* t_buffer = nullptr;
inline thread_local int t_generation = -1;

// This thread's buffer when it claimed one in the current window, else null (the end callback
// and the memory reporter: they never claim).
inline ThreadBuffer* claimed_buffer() {
  return t_generation == g_tracer.generation.load(std::memory_order_relaxed) ? t_buffer : nullptr;
}

// The buffers threads have claimed in this window, [begin, end) of g_tracer.buffers (the view
// counters of the others stay 0).
struct ClaimedBuffers {
  ThreadBuffer* const* begin() const { return g_tracer.buffers.data(); }
  ThreadBuffer* const* end() const {
    return g_tracer.buffers.data() +
           std::min(g_tracer.num_buffers.load(std::memory_order_relaxed), kMaxThreads);
  }
};

}  // namespace llmprof::profile::detail
