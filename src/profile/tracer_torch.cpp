// RecordFunction callbacks and the c10 memory reporter behind profile::Tracer.
// Hot-path rules: the callbacks write into per-thread buffers reserved up front, keep their own
// nesting stack (no ObserverContext allocation), never lock, and stop recording when full. One
// exception, paid for by what it saves: between the steps that read shapes, around an op call
// that ran only view ops in the last read step (CPU bmm: 8-9 view calls per matrix of the batch),
// at::enableRecordFunction switches LibTorch's observation off and on, and LibTorch rebuilds its
// per-thread callback cache each time (a small allocation, an uncontended lock; ~300 ns a pair,
// calibrated as ns_per_hidden_call) instead of observing hundreds of calls (~100 ns each).
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <optional>

#include "llmprof/profile/bytes.h"
#include "llmprof/profile/tracer.h"

namespace llmprof::profile {

namespace {

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

// Shared state of the single active tracer, read by the static callbacks.
struct Global {
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
Global g;
thread_local ThreadBuffer* t_buffer = nullptr;
thread_local int t_generation = -1;

// This thread's buffer; the first event of a thread in a window claims one (rare: the loop's
// thread has slot 0 from start_window).
ThreadBuffer* claim_buffer() {
  const int gen = g.generation.load(std::memory_order_relaxed);
  if (t_generation == gen) return t_buffer;
  const int i = g.num_buffers.fetch_add(1);
  t_buffer = i < kMaxThreads ? g.buffers[i] : nullptr;
  if (t_buffer != nullptr) t_buffer->os_tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  t_generation = gen;
  return t_buffer;
}

// The name id of a FUNCTION-scope event. A dispatcher op's name is its schema's, a string that
// lives as long as the op is registered: cached by pointer. Other names (RECORD_FUNCTION with a
// built string, as the autograd engine's "evaluate_function: <node>") live in the event and their
// address is reused by the next: hashed every time, never cached (else a later name would read
// an earlier one's id).
uint32_t op_name_id(ThreadBuffer* tb, const at::RecordFunction& fn) {
  const char* name = fn.name();
  const size_t slot = (reinterpret_cast<uintptr_t>(name) >> 3) & (ThreadBuffer::kPtrCache - 1);
  if (tb->ptr_key[slot] == name) return tb->ptr_id[slot];
  const uint32_t id = tb->names.intern(name);
  if (fn.operator_name().has_value()) {  // a schema (copies its name: on a cache miss only)
    tb->ptr_key[slot] = name;
    tb->ptr_id[slot] = id;
  }
  return id;
}

// The buffers threads have claimed in this window, [begin, end) of g.buffers (the view counters
// of the others stay 0).
struct ClaimedBuffers {
  ThreadBuffer* const* begin() const { return g.buffers.data(); }
  ThreadBuffer* const* end() const {
    return g.buffers.data() + std::min(g.num_buffers.load(std::memory_order_relaxed), kMaxThreads);
  }
};

void record_tensor(const at::Tensor& t, ShapeRecord& s, size_t slot) {
  if (!t.defined()) return;
  const int64_t nd = std::min<int64_t>(t.dim(), ShapeRecord::kMaxDims);
  s.ndim[slot] = static_cast<int8_t>(nd);
  s.scalar_type[slot] = static_cast<int8_t>(t.scalar_type());
  for (int64_t d = 0; d < nd; ++d) s.dims[slot][d] = t.size(d);
}

// An op's inputs into its ShapeRecord (see there): tensors, and for an op with a cost model its
// integers and the tensors of a list (the others' would only make shapes differ between steps).
void record_shapes(const at::RecordFunction& fn, bool modelled, ShapeRecord& s) {
  constexpr size_t kSlots = ShapeRecord::kMaxInputs;
  auto inputs = fn.inputs();
  for (size_t i = 0; i < inputs.size() && i < kSlots; ++i) {
    const c10::IValue& v = inputs[i];
    if (v.isTensor()) {
      record_tensor(v.toTensor(), s, i);
    } else if (!modelled) {
      continue;
    } else if (v.isInt()) {
      s.dims[i][0] = v.toInt();
      s.scalar_type[i] = ShapeRecord::kIntArg;
    } else if (v.isTensorList()) {  // fills the slots left: what follows it is not recorded
      const c10::List<at::Tensor> list = v.toTensorList();
      const size_t room = kSlots - i, n = list.size();
      const size_t kept = n <= room ? n : room - 1;
      for (size_t k = 0; k < kept; ++k) record_tensor(list.get(k), s, i + k);
      if (n > room) s.ndim[kSlots - 1] = ShapeRecord::kListCut;
      return;
    }
  }
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadBuffer* tb = claim_buffer();
  if (tb == nullptr || !g.active.load(std::memory_order_relaxed)) return nullptr;
  if (tb->depth >= kMaxDepth) {
    ++tb->depth;
    ++tb->dropped;
    return nullptr;
  }
  const char* name = fn.name();
  const bool node = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
  // Autograd node names are built per call: hash them.
  const uint32_t name_id = node ? tb->names.intern(name) : op_name_id(tb, fn);
  uint8_t& cls = tb->name_class[name_id];
  if (cls == kUnclassified) {
    const std::string_view n = tb->names.name(name_id);
    cls = !g.record_view_ops && !node && is_view_op(n) ? kView
          : has_cost_model(n)                          ? kModelled
                                                       : kPlain;
  }
  if (cls == kView) {  // counted, not timed: children see the enclosing op as their parent
    ++tb->step_untimed[name_id];
    const int32_t parent = tb->depth > 0 ? tb->stack[tb->depth - 1] : -1;
    if (parent >= 0) {
      ++tb->step_views_inside[tb->ops[static_cast<size_t>(parent)].name_id];
      if (g.log_views) {
        if (tb->view_log.size() < tb->view_log.capacity()) {
          tb->view_log.push_back({name_id, parent});
        } else {
          tb->view_log_full = true;
        }
      }
    }
    tb->untimed_at[tb->depth] = true;
    tb->stack[tb->depth++] = parent;
    return nullptr;
  }
  tb->untimed_at[tb->depth] = false;
  if (tb->ops.size() == tb->ops.capacity()) {
    tb->stack[tb->depth++] = -1;
    ++tb->dropped;
    return nullptr;
  }
  const auto index = static_cast<int32_t>(tb->ops.size());
  tb->ops.emplace_back();
  OpEvent& e = tb->ops.back();
  e.name_id = name_id;
  e.seq = fn.seqNr();
  e.kind = node ? OpEvent::kBackwardNode : OpEvent::kOp;
  e.step = g.step.load(std::memory_order_relaxed);
  e.phase = g.phase.load(std::memory_order_relaxed);
  e.thread = tb->index;
  e.depth = static_cast<uint8_t>(tb->depth);
  if (tb->index == 0 && g.scopes != nullptr) e.scope_event = g.scopes->current();
  tb->parents.push_back(tb->depth > 0 ? tb->stack[tb->depth - 1] : -1);
  if (fn.needsInputs() && (g.record_shapes || cls == kModelled) &&
      tb->shapes.size() < tb->shapes.capacity()) {
    record_shapes(fn, cls == kModelled, tb->shapes.emplace_back());
    e.shape_id = static_cast<int32_t>(tb->shapes.size() - 1);
  }
  // Views inside this call are counted from the read step: RecordFunction off on this thread
  // until its end (LibTorch rebuilds its per-thread callback cache: see ns_per_hidden_call).
  const bool hide = g.hide_views && !node && tb->hides_views[name_id] != 0;
  tb->hid_at[tb->depth] = hide;
  if (hide) {
    ++tb->step_hidden_calls;
    at::enableRecordFunction(false);
  }
  tb->stack[tb->depth++] = index;
  e.start_ns = now_ns();  // last: the bookkeeping above is not charged to the op
  return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) {
  ThreadBuffer* tb = t_generation == g.generation.load(std::memory_order_relaxed) ? t_buffer : nullptr;
  if (tb == nullptr || tb->depth == 0) return;
  --tb->depth;
  if (tb->depth >= kMaxDepth || tb->untimed_at[tb->depth]) return;
  const int64_t end = now_ns();
  const int32_t index = tb->stack[tb->depth];
  if (index < 0) return;
  if (tb->hid_at[tb->depth]) at::enableRecordFunction(true);
  OpEvent& e = tb->ops[static_cast<size_t>(index)];
  e.end_ns = end;
  const int32_t parent = tb->parents[static_cast<size_t>(index)];
  if (parent >= 0) tb->ops[static_cast<size_t>(parent)].child_ns += end - e.start_ns;
}

// While memory reporting is on, c10's CPU allocator warns (through glog, at most once a second)
// about every free of a block allocated before recording began: parameters, optimizer state. That
// is expected here and not the user's concern, so glog's threshold is raised to errors during the
// window. The flag is looked up at run time: builds of LibTorch without glog simply lack it.
class QuietAllocatorWarnings {
 public:
  QuietAllocatorWarnings()
      : level_(static_cast<int32_t*>(dlsym(RTLD_DEFAULT, "_ZN3fLI17FLAGS_minloglevelE"))) {
    if (level_ != nullptr) {
      saved_ = *level_;
      *level_ = std::max(saved_, 2);  // glog: 0 INFO, 1 WARNING, 2 ERROR
    }
  }
  ~QuietAllocatorWarnings() {
    if (level_ != nullptr) *level_ = saved_;
  }
  QuietAllocatorWarnings(const QuietAllocatorWarnings&) = delete;
  QuietAllocatorWarnings& operator=(const QuietAllocatorWarnings&) = delete;

 private:
  int32_t* level_;
  int32_t saved_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Memory: c10 calls reportMemoryUsage on every CPU allocation and free while this reporter is
// installed as the thread's PROFILER_STATE debug info.

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
  void reportMemoryUsage(void* ptr, int64_t alloc_size, AllocatorTotal total, AllocatorTotal,
                         c10::Device) override {
    const auto total_allocated = static_cast<int64_t>(total);
    int64_t peak = phase_peak_.load(std::memory_order_relaxed);
    while (total_allocated > peak &&
           !phase_peak_.compare_exchange_weak(peak, total_allocated, std::memory_order_relaxed)) {
    }
    allocated_.store(total_allocated, std::memory_order_relaxed);
    ThreadBuffer* tb = t_generation == g.generation.load(std::memory_order_relaxed) ? t_buffer : nullptr;
    if (tb == nullptr) return;
    ++tb->step_memory_reports;
    if (tb->index != 0) return;  // attribution on the loop's thread only
    if (alloc_size > 0 && tb->depth > 0 && tb->depth <= kMaxDepth) {
      const int32_t top = tb->stack[tb->depth - 1];
      if (top >= 0) tb->ops[static_cast<size_t>(top)].alloc_bytes += alloc_size;
    }
    track_scope(ptr, alloc_size);
  }

  // Per scope event: bytes allocated inside it, and live bytes at the end of the forward.
  void reset_scope_tables(size_t n) {
    scope_alloc_.assign(n, 0);
    scope_live_.assign(n, 0);
    scope_saved_.assign(n, 0);
    table_.assign(kTableSize, Entry{});
  }
  // Copies the live bytes of scope events [first, last) (this step's) as "saved for backward".
  void snapshot_saved(size_t first, size_t last) {
    last = std::min(last, scope_live_.size());
    for (size_t i = first; i < last; ++i) scope_saved_[i] = scope_live_[i];
  }
  void set_forward(bool on) { in_forward_ = on; }
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

  void track_scope(void* ptr, int64_t size) {
    const size_t mask = kTableSize - 1;
    size_t i = (reinterpret_cast<uintptr_t>(ptr) >> 4) & mask;
    if (size > 0) {
      const int32_t scope = g.scopes != nullptr ? g.scopes->current() : -1;
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

  std::atomic<int64_t> phase_peak_{0};
  std::atomic<int64_t> allocated_{0};
  std::vector<int64_t> scope_alloc_, scope_live_, scope_saved_;
  std::vector<Entry> table_;
  bool in_forward_ = false;
};

// ---------------------------------------------------------------------------------------------

struct Tracer::Impl {
  TracerOptions options;
  ScopeRecorder scopes;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  std::shared_ptr<MemoryReporter> memory = std::make_shared<MemoryReporter>();
  std::optional<c10::DebugInfoGuard> memory_guard;
  std::optional<QuietAllocatorWarnings> quiet;
  at::CallbackHandle handle = 0;
  at::RecordFunctionCallback callback{on_start, on_end};
  bool reading_shapes = false;  // the registered callback asks for inputs
  // Another RecordFunction observer (global, or thread-local on this thread) was registered when
  // ours last was: switching RecordFunction off inside an op would hide its views from that
  // one too, so nothing is hidden.
  bool others_observe = false;
  // Shape sampling (ops level): kept steps of the cycle so far, whether a read step is the
  // reference, the mapped steps since it (confirmed by the next read step).
  ShapeSampling sampling;
  int64_t kept_in_cycle = 0;
  bool have_ref = false;
  int64_t pending_mapped = 0;
  // The next read step (kept_in_cycle) and the gap to it: shape_interval after the first read,
  // doubled by every read that confirms the shapes did not change.
  int64_t next_read = 0, read_gap = 0;

  // View sampling: kept steps since the last read step whose hidden view calls wait for its
  // confirmation.
  ViewSampling views;
  int64_t pending_hidden_steps = 0;
  int64_t memory_reports = 0;  // in kept steps, every window so far

  // No reference step: the next kept step reads, and the gaps start again from shape_interval.
  void forget_reference() {
    have_ref = false;
    next_read = read_gap = 0;
  }

  // Adds `times` copies of a thread's hidden view calls to its window counts.
  static void count_hidden(ThreadBuffer& tb, int64_t times) {
    for (const auto& h : tb.ref_hidden) {
      tb.untimed[h.view] += h.count * times;
      tb.views_inside[h.parent] += h.count * times;
    }
  }
  int64_t hidden_views_per_step() const {
    int64_t n = 0;
    for (const auto& tb : buffers) {
      for (const auto& h : tb->ref_hidden) n += h.count;
    }
    return n;
  }

  // At the end of a read step: its view calls per (enclosing op name, view name), sorted.
  static std::vector<ThreadBuffer::HiddenViews> views_by_op(const ThreadBuffer& tb) {
    std::vector<ThreadBuffer::HiddenViews> pairs;
    pairs.reserve(tb.view_log.size());
    for (const auto& v : tb.view_log) {
      pairs.push_back({tb.ops[static_cast<size_t>(v.parent)].name_id, v.name_id, 1});
    }
    std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
      return a.parent != b.parent ? a.parent < b.parent : a.view < b.view;
    });
    size_t out = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (out > 0 && pairs[out - 1].parent == pairs[i].parent && pairs[out - 1].view == pairs[i].view) {
        ++pairs[out - 1].count;
      } else {
        pairs[out++] = pairs[i];
      }
    }
    pairs.resize(out);
    return pairs;
  }

  // At the end of a read step (between steps): confirms the hidden view calls of the steps since
  // the last read step against this one's, then picks the ops that hide theirs until the next:
  // ops whose calls in this step ran no timed op and at least kMinViewsToHide view calls each.
  void sample_views(bool shapes_confirmed) {
    std::vector<std::vector<ThreadBuffer::HiddenViews>> now;
    for (auto& tb : buffers) now.push_back(views_by_op(*tb));
    if (pending_hidden_steps > 0) {
      bool same = shapes_confirmed;
      for (size_t t = 0; t < buffers.size() && same; ++t) {
        const ThreadBuffer& tb = *buffers[t];
        std::vector<ThreadBuffer::HiddenViews> under;
        for (const auto& h : now[t]) {
          if (tb.hides_views[h.parent] != 0) under.push_back(h);
        }
        same = !tb.view_log_full && under == tb.ref_hidden;
      }
      if (same) {
        for (auto& tb : buffers) count_hidden(*tb, pending_hidden_steps);
        views.counted_views += hidden_views_per_step() * pending_hidden_steps;
        views.mapped_steps += pending_hidden_steps;
      } else {
        views.lost_steps += pending_hidden_steps;
        sampling.every_step = true;
      }
      pending_hidden_steps = 0;
    }
    std::vector<int64_t> calls(kNameSlots), viewed(kNameSlots);
    std::vector<uint8_t> runs_timed(kNameSlots);
    for (size_t t = 0; t < buffers.size(); ++t) {
      ThreadBuffer& tb = *buffers[t];
      std::fill(tb.hides_views.begin(), tb.hides_views.end(), 0);
      tb.ref_hidden.clear();
      const bool usable = !tb.view_log_full && !sampling.every_step && !options.record_view_ops;
      tb.view_log.clear();
      tb.view_log_full = false;
      if (!usable) continue;
      std::fill(calls.begin(), calls.end(), 0);
      std::fill(viewed.begin(), viewed.end(), 0);
      std::fill(runs_timed.begin(), runs_timed.end(), 0);
      for (size_t i = tb.step_first; i < tb.ops.size(); ++i) {
        const OpEvent& e = tb.ops[i];
        if (e.kind != OpEvent::kOp) runs_timed[e.name_id] = 1;  // autograd nodes never hide
        ++calls[e.name_id];
        const int32_t p = tb.parents[i];
        if (p >= 0) runs_timed[tb.ops[static_cast<size_t>(p)].name_id] = 1;
      }
      for (const auto& h : now[t]) viewed[h.parent] += h.count;
      for (size_t id = 0; id < kNameSlots; ++id) {
        tb.hides_views[id] = calls[id] > 0 && runs_timed[id] == 0 &&
                             viewed[id] >= kMinViewsToHide * calls[id];
      }
      for (const auto& h : now[t]) {
        if (tb.hides_views[h.parent] != 0) tb.ref_hidden.push_back(h);
      }
    }
  }
  bool step_reads = false;
  std::vector<PhaseMemory> phase_memory;
  std::vector<int32_t> steps;
  TracerCalibration calibration;
  int32_t step = 0;
  bool keep = false;
  bool prefaulted = false;
  size_t step_first_op = 0, step_first_scope = 0, step_first_mem = 0;

  explicit Impl(const TracerOptions& o)
      : options(o), scopes(o.max_scope_events, [] { return static_cast<int64_t>(at::sequence_number::peek()); }) {}

  // (Re-)registers the op callbacks, asking LibTorch for the ops' inputs only when shapes are
  // read. Between steps only: it takes LibTorch's callback lock.
  void register_callback(bool read_shapes) {
    if (handle != 0) at::removeCallback(handle);
    others_observe = at::hasCallbacks();
    callback.needsInputs(read_shapes);
    handle = at::addGlobalCallback(callback);
    reading_shapes = read_shapes;
  }

  // Shape sampling, at the end of a kept step at ops level (between steps: loops over the step's
  // events). A read step becomes the reference and confirms the mapped steps since the last
  // one; another step takes the reference's shapes when its op sequence is the same.
  void sample_shapes() {
    const auto same_ops = [](const ThreadBuffer& tb, bool compare_shapes) {
      if (tb.ops.size() - tb.step_first != tb.ref_count) return false;
      for (size_t i = 0; i < tb.ref_count; ++i) {
        const OpEvent& a = tb.ops[tb.step_first + i];
        const OpEvent& b = tb.ops[tb.ref_first + i];
        if (a.name_id != b.name_id) return false;
        if (!compare_shapes) continue;
        if ((a.shape_id < 0) != (b.shape_id < 0)) return false;
        if (a.shape_id >= 0 &&
            std::memcmp(&tb.shapes[static_cast<size_t>(a.shape_id)],
                        &tb.shapes[static_cast<size_t>(b.shape_id)], sizeof(ShapeRecord)) != 0) {
          return false;
        }
      }
      return true;
    };
    const auto all_same = [&](bool compare_shapes) {
      return std::all_of(buffers.begin(), buffers.end(),
                         [&](const auto& tb) { return same_ops(*tb, compare_shapes); });
    };
    if (!step_reads) {
      if (have_ref && all_same(false)) {
        for (auto& tb : buffers) {
          for (size_t i = 0; i < tb->ref_count; ++i) {
            tb->ops[tb->step_first + i].shape_id = tb->ops[tb->ref_first + i].shape_id;
          }
        }
        ++pending_mapped;
        if (g.hide_views) ++pending_hidden_steps;
      } else {  // the op sequence changed: this step has no shapes; read every later one
        ++sampling.unmapped_steps;
        sampling.every_step = true;
        if (g.hide_views) ++views.lost_steps;
      }
      return;
    }
    bool shapes_same = true;
    if (have_ref && pending_mapped > 0) {
      shapes_same = all_same(true);
      if (shapes_same) {
        sampling.mapped_steps += pending_mapped;
      } else {  // shapes changed somewhere since the reference: the mapped steps lose theirs
        for (auto& tb : buffers) {
          for (size_t i = tb->ref_first + tb->ref_count; i < tb->step_first; ++i) tb->ops[i].shape_id = -1;
        }
        sampling.unmapped_steps += pending_mapped;
        sampling.every_step = true;
      }
    }
    pending_mapped = 0;
    sample_views(shapes_same);
    const int interval = std::max(1, options.shape_interval);
    read_gap = read_gap == 0 || interval == 1 ? interval : 2 * read_gap;
    next_read = kept_in_cycle + read_gap;
    for (auto& tb : buffers) {
      tb->ref_first = tb->step_first;
      tb->ref_count = tb->ops.size() - tb->step_first;
    }
    have_ref = true;
    ++sampling.read_steps;
  }
};

Tracer::Tracer(const TracerOptions& options) : impl_(std::make_unique<Impl>(options)) {}

Tracer::~Tracer() {
  if (recording_) stop_window();
}

namespace {
// Time of n cheap ops (a 1-element add), for the per-event cost calibration.
int64_t time_probe_ops(int n) {
  at::Tensor a = torch::ones({1}), b = torch::ones({1});
  const int64_t t0 = now_ns();
  for (int i = 0; i < n; ++i) a.add_(b);
  return now_ns() - t0;
}
}  // namespace

void Tracer::start_window() {
  Impl& m = *impl_;
  const bool ops = m.options.level >= Level::kOps;
  if (!m.buffers.empty()) {  // a later cycle of the schedule: the emptied buffers again
    g.active.store(true);
    m.register_callback(false);
    m.kept_in_cycle = 0;
    m.forget_reference();
    m.memory->reset_scope_tables(m.options.max_scope_events);  // scope events count from 0 again
    m.quiet.emplace();
    m.memory_guard.emplace(c10::DebugInfoKind::PROFILER_STATE, m.memory);
    recording_ = true;
    return;
  }
  // Per-thread buffers, reserved now: the pages of a buffer become resident only as it fills.
  for (int i = 0; i < kMaxThreads; ++i) {
    auto tb = std::make_unique<ThreadBuffer>();
    tb->index = static_cast<uint16_t>(i);
    tb->ops.reserve(m.options.max_events);
    tb->parents.reserve(m.options.max_events);
    tb->shapes.reserve(ops ? m.options.max_events / 4 : 0);
    tb->name_class.assign(kNameSlots, kUnclassified);
    tb->hides_views.assign(kNameSlots, 0);
    if (ops && !m.options.record_view_ops) tb->view_log.reserve(m.options.max_events);
    for (auto* v : {&tb->step_untimed, &tb->untimed, &tb->step_views_inside, &tb->views_inside}) {
      v->assign(kNameSlots, 0);
    }
    g.buffers[i] = tb.get();
    m.buffers.push_back(std::move(tb));
  }
  g.generation.fetch_add(1);
  g.num_buffers.store(0);
  claim_buffer();  // slot 0: the training loop's thread
  g.record_shapes = m.options.record_shapes;
  g.record_view_ops = m.options.record_view_ops;
  g.scopes = &m.scopes;
  m.phase_memory.reserve(1 << 16);

  // Touch the first pages so the calibration below measures the callbacks, not page faults.
  const size_t touch = std::min<size_t>(8192, g.buffers[0]->ops.capacity());  // never past max_events
  g.buffers[0]->ops.resize(touch);
  g.buffers[0]->parents.resize(touch);
  g.buffers[0]->ops.clear();
  g.buffers[0]->parents.clear();
  // Calibration of the per-event cost with a FUNCTION-scope callback on a cheap op:
  // (time with the callback - without) / events recorded.
  const int kProbeOps = static_cast<int>(std::min<size_t>(4000, touch / 2));
  const auto clear_main = [&] {
    m.buffers[0]->ops.clear();
    m.buffers[0]->parents.clear();
    m.buffers[0]->shapes.clear();
    m.buffers[0]->depth = 0;
  };
  // Time kProbeOps cheap ops with the callback registered (reading inputs or not).
  const auto time_with_callback = [&](bool read_inputs) {
    auto probe_cb = at::RecordFunctionCallback(on_start, on_end).needsInputs(read_inputs);
    probe_cb.scopes({at::RecordScope::FUNCTION});
    const at::CallbackHandle probe = at::addGlobalCallback(probe_cb);
    g.active.store(true);
    const int64_t ns = time_probe_ops(kProbeOps);
    at::removeCallback(probe);
    g.active.store(false);
    return ns;
  };
  // LibTorch's part: the same ops observed by a callback that does nothing.
  auto empty_cb = at::RecordFunctionCallback(
      [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> { return nullptr; },
      [](const at::RecordFunction&, at::ObserverContext*) {});
  empty_cb.scopes({at::RecordScope::FUNCTION});
  const auto time_empty_callback = [&] {
    const at::CallbackHandle empty = at::addGlobalCallback(empty_cb);
    const int64_t ns = time_probe_ops(kProbeOps);
    at::removeCallback(empty);
    return ns;
  };
  // The fastest of a few interleaved rounds: one disturbed timing (a noisy host) would
  // otherwise skew every estimate of the window.
  time_probe_ops(kProbeOps);  // warm
  int64_t off_ns = INT64_MAX, on_ns = INT64_MAX, empty_ns = INT64_MAX, reading_ns = INT64_MAX;
  size_t events = 0;
  for (int round = 0; round < 3; ++round) {
    off_ns = std::min(off_ns, time_probe_ops(kProbeOps));
    on_ns = std::min(on_ns, time_with_callback(false));
    events = g.buffers[0]->ops.size();
    clear_main();
    empty_ns = std::min(empty_ns, time_empty_callback());
    if (ops) {
      reading_ns = std::min(reading_ns, time_with_callback(true));
      clear_main();
    }
  }
  m.calibration.ns_per_call_record_function =
      std::max(0.0, static_cast<double>(empty_ns - off_ns) / kProbeOps);
  if (ops) {
    m.calibration.ns_per_call_reading_shapes =
        std::max(0.0, static_cast<double>(reading_ns - on_ns) / kProbeOps);
  }
  m.calibration.events_per_probe_op = static_cast<double>(events) / kProbeOps;
  // The same for an untimed view op (counted only), when views are not recorded.
  if (ops && !m.options.record_view_ops) {
    at::Tensor v = torch::ones({4});
    const auto time_views = [&] {
      const int64_t t0 = now_ns();
      for (int i = 0; i < kProbeOps; ++i) (void)v.select(0, 1);
      return now_ns() - t0;
    };
    time_views();
    auto probe_cb = at::RecordFunctionCallback(on_start, on_end);
    probe_cb.scopes({at::RecordScope::FUNCTION});
    // Switching RecordFunction off and on around a call (view sampling), with the callback
    // registered: LibTorch rebuilds the thread's callback cache each time.
    const int kToggles = 2000;
    const auto time_toggles = [&] {
      const int64_t t0 = now_ns();
      for (int i = 0; i < kToggles; ++i) {
        at::enableRecordFunction(false);
        at::enableRecordFunction(true);
      }
      return now_ns() - t0;
    };
    int64_t view_off = INT64_MAX, view_on = INT64_MAX, toggles = INT64_MAX, counted = 0;
    for (int round = 0; round < 3; ++round) {
      view_off = std::min(view_off, time_views());
      const at::CallbackHandle probe = at::addGlobalCallback(probe_cb);
      g.active.store(true);
      view_on = std::min(view_on, time_views());
      toggles = std::min(toggles, time_toggles());
      at::removeCallback(probe);
      g.active.store(false);
      counted = 0;
      for (int64_t c : g.buffers[0]->step_untimed) counted += c;
      std::fill(g.buffers[0]->step_untimed.begin(), g.buffers[0]->step_untimed.end(), 0);
    }
    m.calibration.ns_per_untimed_event =
        counted > 0 ? std::max(0.0, static_cast<double>(view_on - view_off) / static_cast<double>(counted))
                    : 0.0;
    m.calibration.ns_per_hidden_call = static_cast<double>(toggles) / kToggles;
  }
  m.calibration.ns_per_event =
      events > 0 ? std::max(0.0, static_cast<double>(on_ns - off_ns) / static_cast<double>(events))
                 : 0.0;
  clear_main();
  // One scope = 2 clock reads + 2 sequence-number reads + the stores: time 20k of them.
  {
    ScopeRecorder probe_scopes(20000, [] { return static_cast<int64_t>(at::sequence_number::peek()); });
    set_active_scope_recorder(&probe_scopes);
    const int64_t t0 = now_ns();
    for (int i = 0; i < 20000; ++i) {
      LLMPROF_SCOPE(Scope::kBlock, 0);
    }
    m.calibration.ns_per_scope = static_cast<double>(now_ns() - t0) / 20000.0;
    set_active_scope_recorder(nullptr);
  }

  // One memory report (an allocation or a free while the reporter is installed): N tensor
  // allocations and frees with and without it, the fastest of a few interleaved tries (the
  // reporter's tables exist before it sees its first free).
  m.memory->reset_scope_tables(m.options.max_scope_events);
  {
    const auto time_allocs = [] {
      const int64_t t0 = now_ns();
      for (int i = 0; i < 2000; ++i) (void)at::empty({16});
      return now_ns() - t0;
    };
    time_allocs();
    int64_t without = INT64_MAX, with = INT64_MAX;
    for (int rep = 0; rep < 5; ++rep) {
      without = std::min(without, time_allocs());
      c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, m.memory);
      with = std::min(with, time_allocs());
    }
    m.calibration.ns_per_memory_report = std::max(0.0, static_cast<double>(with - without) / 4000.0);
    m.buffers[0]->step_memory_reports = 0;
  }

  if (ops) {
    m.callback.scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION});
  } else {
    m.callback.scopes({at::RecordScope::BACKWARD_FUNCTION});
  }
  m.register_callback(false);  // begin_step asks for inputs in the steps that read shapes
  m.kept_in_cycle = 0;
  m.forget_reference();
  g.active.store(true);
  m.memory->reset_scope_tables(m.options.max_scope_events);
  m.quiet.emplace();
  m.memory_guard.emplace(c10::DebugInfoKind::PROFILER_STATE, m.memory);
  recording_ = true;
}

void Tracer::stop_window() {
  Impl& m = *impl_;
  g.active.store(false);
  if (m.handle != 0) at::removeCallback(m.handle);
  m.handle = 0;
  m.sampling.unconfirmed_steps += m.pending_mapped;  // the window ended before a read step
  m.pending_mapped = 0;
  if (m.pending_hidden_steps > 0) {  // counted like the mapped steps, unconfirmed
    for (auto& tb : m.buffers) Impl::count_hidden(*tb, m.pending_hidden_steps);
    m.views.counted_views += m.hidden_views_per_step() * m.pending_hidden_steps;
    m.views.unconfirmed_steps += m.pending_hidden_steps;
    m.pending_hidden_steps = 0;
  }
  g.log_views = g.hide_views = false;
  m.memory_guard.reset();
  m.quiet.reset();
  set_active_scope_recorder(nullptr);
  recording_ = false;
}

ScopedEval::ScopedEval()
    : phase_(g.phase.load(std::memory_order_relaxed)), log_views_(g.log_views),
      hide_views_(g.hide_views) {
  g.phase.store(static_cast<uint8_t>(Phase::kEval), std::memory_order_relaxed);
  g.log_views = g.hide_views = false;  // view sampling concerns the steps
}

ScopedEval::~ScopedEval() {
  g.phase.store(phase_, std::memory_order_relaxed);
  g.log_views = log_views_;
  g.hide_views = hide_views_;
}

void Tracer::begin_step(int32_t step, bool keep) {
  Impl& m = *impl_;
  if (!m.keep) {  // after a warm-up step (truncated at its end): drop what ran since (an eval)
    for (auto& tb : m.buffers) {
      tb->ops.resize(std::min(tb->ops.size(), tb->step_first));
      tb->parents.resize(std::min(tb->parents.size(), tb->step_first));
      tb->shapes.resize(std::min(tb->shapes.size(), tb->step_first_shape));
    }
  }
  m.step = step;
  m.keep = keep;
  g.step.store(step);
  m.scopes.set_step(step, false);
  m.step_first_op = m.buffers.empty() ? 0 : m.buffers[0]->ops.size();
  m.step_first_scope = m.scopes.events().size();
  m.step_first_mem = m.phase_memory.size();
  if (m.options.level >= Level::kOps) {
    const auto k = m.kept_in_cycle;
    m.step_reads = keep && (m.sampling.every_step || !m.have_ref || k >= m.next_read ||
                            k + 1 == static_cast<int64_t>(m.options.active_steps));
    if (m.step_reads != m.reading_shapes) m.register_callback(m.step_reads);
  }
  const bool views_counted = m.options.level >= Level::kOps && !m.options.record_view_ops;
  g.log_views = views_counted && m.step_reads;
  g.hide_views = views_counted && keep && !m.step_reads && m.have_ref && !m.sampling.every_step &&
                 m.hidden_views_per_step() > 0 && !m.others_observe;
  for (auto& tb : m.buffers) {
    tb->step_first = tb->ops.size();
    tb->step_first_shape = tb->shapes.size();
  }
  for (ThreadBuffer* tb : ClaimedBuffers{}) {
    std::fill(tb->step_untimed.begin(), tb->step_untimed.end(), 0);
    std::fill(tb->step_views_inside.begin(), tb->step_views_inside.end(), 0);
    tb->step_hidden_calls = 0;
    tb->step_memory_reports = 0;
    if (g.log_views) tb->view_log.clear();
  }
  set_active_scope_recorder(&m.scopes);
}

void Tracer::end_step() {
  Impl& m = *impl_;
  set_active_scope_recorder(nullptr);
  if (!m.keep && !m.buffers.empty()) {  // schedule warm-up step: drop what it recorded
    // and size the loop thread's buffer from it: room for the active steps (+25%), touched now so
    // page faults happen here, between steps, not in the recorded ones.
    ThreadBuffer& main = *m.buffers[0];
    const size_t per_step = main.ops.size() - m.step_first_op;
    const size_t want = std::min(main.ops.capacity(),
                                 m.step_first_op + per_step * (m.options.active_steps + 1) * 5 / 4 + 1024);
    if (!m.prefaulted && want > main.ops.size()) {
      const size_t keep_ops = m.step_first_op;
      main.ops.resize(want);
      main.parents.resize(want);
      main.ops.resize(keep_ops);
      main.parents.resize(keep_ops);
      // The view log of a read step: this step's view calls (+25%).
      int64_t views = 0;
      for (int64_t c : main.step_untimed) views += c;
      main.view_log.resize(std::min(main.view_log.capacity(), static_cast<size_t>(views) * 5 / 4 + 1024));
      main.view_log.clear();
      m.prefaulted = true;
    }
    for (auto& tb : m.buffers) {
      tb->ops.resize(tb->step_first);
      tb->parents.resize(tb->step_first);
      tb->shapes.resize(tb->step_first_shape);
    }
    m.scopes.truncate(m.step_first_scope);
    m.phase_memory.resize(m.step_first_mem);
    return;
  }
  for (ThreadBuffer* tb : ClaimedBuffers{}) {
    for (size_t i = 0; i < kNameSlots; ++i) {
      tb->untimed[i] += tb->step_untimed[i];
      tb->views_inside[i] += tb->step_views_inside[i];
    }
    m.views.hidden_calls += tb->step_hidden_calls;
    m.memory_reports += tb->step_memory_reports;
  }
  if (m.options.level >= Level::kOps) m.sample_shapes();
  ++m.kept_in_cycle;
  m.steps.push_back(m.step);
}

void Tracer::on_phase_begin(Phase phase) {
  Impl& m = *impl_;
  g.phase.store(static_cast<uint8_t>(phase), std::memory_order_relaxed);
  m.memory->take_phase_peak();  // start the phase's peak from the current level
  if (phase == Phase::kForward) m.memory->set_forward(true);
  if (phase == Phase::kBackward) m.scopes.set_step(m.step, /*in_backward=*/true);
}

void Tracer::on_phase_end(Phase phase) {
  Impl& m = *impl_;
  if (phase == Phase::kForward) {
    m.memory->set_forward(false);
    // What this step's forward left alive is what backward will use.
    m.memory->snapshot_saved(m.step_first_scope, m.scopes.events().size());
  }
  if (phase == Phase::kBackward) m.scopes.set_step(m.step, false);
  PhaseMemory pm;
  pm.step = m.step;
  pm.phase = static_cast<uint8_t>(phase);
  pm.peak_allocated_bytes = m.memory->take_phase_peak();
  pm.end_allocated_bytes = m.memory->allocated();
  if (m.phase_memory.size() < m.phase_memory.capacity()) m.phase_memory.push_back(pm);
}

TraceData Tracer::take_data() {
  Impl& m = *impl_;
  TraceData d;
  d.calibration = m.calibration;
  d.shape_sampling = m.sampling;
  d.view_sampling = m.views;
  d.memory_reports = m.memory_reports;
  d.scopes = m.scopes.events();
  d.dropped_scopes = m.scopes.dropped();
  d.memory = m.phase_memory;
  d.steps = m.steps;
  d.scope_alloc_bytes.assign(m.memory->scope_alloc().begin(),
                             m.memory->scope_alloc().begin() +
                                 std::min(d.scopes.size(), m.memory->scope_alloc().size()));
  d.scope_saved_bytes.assign(m.memory->scope_saved().begin(),
                             m.memory->scope_saved().begin() +
                                 std::min(d.scopes.size(), m.memory->scope_saved().size()));
  // Merge threads: names re-interned into one global list, shape and parent indices offset.
  NameTable global_names;
  for (auto& tb : m.buffers) {
    if (tb->ops.empty() && std::all_of(tb->untimed.begin(), tb->untimed.end(),
                                       [](int64_t c) { return c == 0; })) {
      continue;
    }
    ++d.num_threads;
    d.dropped_events += tb->dropped;
    const auto op_offset = static_cast<int32_t>(d.ops.size());
    const auto shape_offset = static_cast<int32_t>(d.shapes.size());
    std::vector<uint32_t> to_global(tb->names.size());
    for (uint32_t id = 0; id < to_global.size(); ++id) {
      to_global[id] = global_names.intern(std::string(tb->names.name(id)).c_str());
    }
    for (size_t i = 0; i < tb->ops.size(); ++i) {
      OpEvent e = tb->ops[i];
      e.name_id = to_global[e.name_id];
      if (e.shape_id >= 0) e.shape_id += shape_offset;
      d.ops.push_back(e);
      const int32_t p = tb->parents[i];
      d.parents.push_back(p >= 0 ? p + op_offset : -1);
    }
    d.shapes.insert(d.shapes.end(), tb->shapes.begin(), tb->shapes.end());
    for (uint32_t id = 0; id < to_global.size(); ++id) {
      const uint32_t global = to_global[id];
      if (global >= d.untimed_calls.size()) {
        d.untimed_calls.resize(global + 1, 0);
        d.views_inside.resize(global + 1, 0);
      }
      d.untimed_calls[global] += tb->untimed[id];
      d.views_inside[global] += tb->views_inside[id];
    }
  }
  d.untimed_calls.resize(global_names.size(), 0);
  d.views_inside.resize(global_names.size(), 0);
  for (uint32_t i = 0; i < global_names.size(); ++i) d.names.emplace_back(global_names.name(i));
  for (auto& tb : m.buffers) d.thread_ids.push_back(tb->os_tid);
  // Empty for the next window; the buffers keep their capacity and resident pages, so a run
  // that records cycle after cycle does not grow.
  for (auto& tb : m.buffers) {
    tb->ops.clear();
    tb->parents.clear();
    tb->shapes.clear();
    std::fill(tb->untimed.begin(), tb->untimed.end(), 0);
    std::fill(tb->views_inside.begin(), tb->views_inside.end(), 0);
    tb->step_first = tb->step_first_shape = tb->ref_first = tb->ref_count = 0;
  }
  m.forget_reference();
  m.scopes.truncate(0);
  m.phase_memory.clear();
  m.steps.clear();
  return d;
}

}  // namespace llmprof::profile
