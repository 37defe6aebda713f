// profile::Tracer (llmprof/profile/tracer.h): its windows, steps and phases. Everything here runs
// between steps or at a phase boundary, never per op: the per-op path is the RecordFunction
// callbacks (op_callbacks_torch.cpp) and the memory reporter (memory_reporter_torch.cpp), which
// write into the per-thread buffers (thread_buffer.h) this file reserves, samples
// (step_sampler.h) and merges.
#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/torch.h>

#include <algorithm>
#include <optional>

#include "calibration.h"
#include "llmprof/profile/tracer.h"
#include "memory_reporter.h"
#include "op_callbacks.h"
#include "step_sampler.h"
#include "thread_buffer.h"

namespace llmprof::profile {

using detail::g_tracer;
using detail::ThreadBuffer;

struct Tracer::Impl {
  TracerOptions options;
  ScopeRecorder scopes;
  detail::Buffers buffers;
  std::shared_ptr<detail::MemoryReporter> memory = std::make_shared<detail::MemoryReporter>();
  std::optional<c10::DebugInfoGuard> memory_guard;
  std::optional<detail::QuietAllocatorWarnings> quiet;
  at::CallbackHandle handle = 0;
  at::RecordFunctionCallback callback{detail::on_start, detail::on_end};
  bool reading_shapes = false;  // the registered callback asks for inputs
  // Another RecordFunction observer (global, or thread-local on this thread) was registered when
  // ours last was: switching RecordFunction off inside an op would hide its views from that
  // one too, so nothing is hidden.
  bool others_observe = false;
  detail::StepSampler sampler;  // shape and view sampling (ops level)
  int64_t memory_reports = 0;   // in kept steps, every window so far
  std::vector<PhaseMemory> phase_memory;
  std::vector<int32_t> steps;
  TracerCalibration calibration;
  int32_t step = 0;
  bool keep = false;
  bool prefaulted = false;
  size_t step_first_op = 0, step_first_scope = 0, step_first_mem = 0;

  explicit Impl(const TracerOptions& o)
      : options(o),
        scopes(o.max_scope_events,
               [] { return static_cast<int64_t>(at::sequence_number::peek()); }),
        sampler(o) {}

  bool ops_level() const { return options.level >= Level::kOps; }

  // (Re-)registers the op callbacks, asking LibTorch for the ops' inputs only when shapes are
  // read. Between steps only: it takes LibTorch's callback lock.
  void register_callback(bool read_shapes) {
    if (handle != 0) at::removeCallback(handle);
    others_observe = at::hasCallbacks();
    callback.needsInputs(read_shapes);
    handle = at::addGlobalCallback(callback);
    reading_shapes = read_shapes;
  }

  // First window: per-thread buffers, reserved now (the pages of a buffer become resident only
  // as it fills), slot 0 claimed by this (the loop's) thread, then the calibration.
  void set_up() {
    for (int i = 0; i < detail::kMaxThreads; ++i) {
      auto tb = std::make_unique<ThreadBuffer>();
      tb->index = static_cast<uint16_t>(i);
      detail::reserve_buffer(*tb, options.max_events, ops_level(), !options.record_view_ops);
      g_tracer.buffers[i] = tb.get();
      buffers.push_back(std::move(tb));
    }
    g_tracer.generation.fetch_add(1);
    g_tracer.num_buffers.store(0);
    detail::claim_buffer();  // slot 0: the training loop's thread
    g_tracer.record_shapes = options.record_shapes;
    g_tracer.record_view_ops = options.record_view_ops;
    g_tracer.scopes = &scopes;
    phase_memory.reserve(1 << 16);
    calibration = detail::calibrate_tracer(*buffers[0], memory, options);
    if (ops_level()) {
      callback.scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION});
    } else {
      callback.scopes({at::RecordScope::BACKWARD_FUNCTION});
    }
  }

  // Every window, the first and the later cycles of the schedule (the emptied buffers again):
  // callbacks, sampling from the cycle's start, scope events from 0, the memory reporter.
  void open_window() {
    register_callback(false);  // begin_step asks for inputs in the steps that read shapes
    sampler.start_cycle();
    g_tracer.active.store(true);
    memory->reset_scope_tables(options.max_scope_events);
    quiet.emplace();
    memory->set_next(dynamic_cast<c10::MemoryReportingInfoBase*>(
        c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE)));
    memory_guard.emplace(c10::DebugInfoKind::PROFILER_STATE, memory);
  }

  // After a warm-up step (truncated at its end): drops what ran since (an eval pass).
  void drop_since_warm_up() {
    for (auto& tb : buffers) {
      tb->ops.resize(std::min(tb->ops.size(), tb->step_first));
      tb->parents.resize(std::min(tb->parents.size(), tb->step_first));
      tb->shapes.resize(std::min(tb->shapes.size(), tb->step_first_shape));
    }
  }

  // Whether the step that begins reads shapes (re-registering the callback when that changes),
  // and whether it logs or hides view calls.
  void plan_sampling(bool keep_step) {
    if (ops_level()) {
      const bool reads = sampler.begin_step(keep_step);
      if (reads != reading_shapes) register_callback(reads);
    }
    const bool views_counted = ops_level() && !options.record_view_ops;
    g_tracer.log_views = views_counted && sampler.step_reads();
    g_tracer.hide_views =
        views_counted && !others_observe && sampler.may_hide_views(buffers, keep_step);
  }

  // Where the step's events start in each buffer; the per-step counters of the claimed ones
  // from 0.
  void mark_step_start() {
    for (auto& tb : buffers) {
      tb->step_first = tb->ops.size();
      tb->step_first_shape = tb->shapes.size();
    }
    for (ThreadBuffer* tb : detail::ClaimedBuffers{}) {
      std::fill(tb->step_untimed.begin(), tb->step_untimed.end(), 0);
      std::fill(tb->step_views_inside.begin(), tb->step_views_inside.end(), 0);
      tb->step_hidden_calls = 0;
      tb->step_memory_reports = 0;
      if (g_tracer.log_views) tb->view_log.clear();
    }
  }

  // The loop thread's buffer sized from the first warm-up step: room for the active steps
  // (+25%), touched now so page faults happen here, between steps, not in the recorded ones.
  void prefault_from_warm_up() {
    ThreadBuffer& main = *buffers[0];
    const size_t per_step = main.ops.size() - step_first_op;
    const size_t room = per_step * (options.active_steps + 1) * 5 / 4 + 1024;
    const size_t want = std::min(main.ops.capacity(), step_first_op + room);
    if (prefaulted || want <= main.ops.size()) return;
    const size_t keep_ops = step_first_op;
    main.ops.resize(want);
    main.parents.resize(want);
    main.ops.resize(keep_ops);
    main.parents.resize(keep_ops);
    // The view log of a read step: this step's view calls (+25%).
    int64_t views = 0;
    for (int64_t c : main.step_untimed) views += c;
    main.view_log.resize(
        std::min(main.view_log.capacity(), static_cast<size_t>(views) * 5 / 4 + 1024));
    main.view_log.clear();
    prefaulted = true;
  }

  // A schedule warm-up step ends: drops what it recorded.
  void drop_warm_up_step() {
    prefault_from_warm_up();
    for (auto& tb : buffers) {
      tb->ops.resize(tb->step_first);
      tb->parents.resize(tb->step_first);
      tb->shapes.resize(tb->step_first_shape);
    }
    scopes.truncate(step_first_scope);
    phase_memory.resize(step_first_mem);
  }

  // A kept step ends: its untimed calls, hidden calls and memory reports join the window's.
  void add_step_counts() {
    for (ThreadBuffer* tb : detail::ClaimedBuffers{}) {
      for (size_t i = 0; i < detail::kNameSlots; ++i) {
        tb->untimed[i] += tb->step_untimed[i];
        tb->views_inside[i] += tb->step_views_inside[i];
      }
      sampler.add_hidden_calls(tb->step_hidden_calls);
      memory_reports += tb->step_memory_reports;
    }
  }
};

Tracer::Tracer(const TracerOptions& options) : impl_(std::make_unique<Impl>(options)) {}

Tracer::~Tracer() {
  if (recording_) stop_window();
}

void Tracer::start_window() {
  Impl& m = *impl_;
  if (m.buffers.empty()) m.set_up();
  m.open_window();
  recording_ = true;
}

void Tracer::stop_window() {
  Impl& m = *impl_;
  g_tracer.active.store(false);
  if (m.handle != 0) at::removeCallback(m.handle);
  m.handle = 0;
  m.sampler.stop(m.buffers);
  g_tracer.log_views = g_tracer.hide_views = false;
  m.memory_guard.reset();
  m.quiet.reset();
  set_active_scope_recorder(nullptr);
  recording_ = false;
}

ScopedEval::ScopedEval()
    : phase_(g_tracer.phase.load(std::memory_order_relaxed)), log_views_(g_tracer.log_views),
      hide_views_(g_tracer.hide_views) {
  g_tracer.phase.store(static_cast<uint8_t>(Phase::kEval), std::memory_order_relaxed);
  g_tracer.log_views = g_tracer.hide_views = false;  // view sampling concerns the steps
}

ScopedEval::~ScopedEval() {
  g_tracer.phase.store(phase_, std::memory_order_relaxed);
  g_tracer.log_views = log_views_;
  g_tracer.hide_views = hide_views_;
}

void Tracer::begin_step(int32_t step, bool keep) {
  Impl& m = *impl_;
  if (!m.keep) m.drop_since_warm_up();
  m.step = step;
  m.keep = keep;
  g_tracer.step.store(step);
  m.scopes.set_step(step, false);
  m.step_first_op = m.buffers.empty() ? 0 : m.buffers[0]->ops.size();
  m.step_first_scope = m.scopes.events().size();
  m.step_first_mem = m.phase_memory.size();
  m.plan_sampling(keep);
  m.mark_step_start();
  set_active_scope_recorder(&m.scopes);
}

void Tracer::end_step() {
  Impl& m = *impl_;
  set_active_scope_recorder(nullptr);
  if (!m.keep && !m.buffers.empty()) {
    m.drop_warm_up_step();
    return;
  }
  m.add_step_counts();
  if (m.ops_level()) m.sampler.end_step(m.buffers, g_tracer.hide_views);
  m.steps.push_back(m.step);
}

void Tracer::on_phase_begin(Phase phase) {
  Impl& m = *impl_;
  g_tracer.phase.store(static_cast<uint8_t>(phase), std::memory_order_relaxed);
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
  d.shape_sampling = m.sampler.shape_sampling();
  d.view_sampling = m.sampler.view_sampling();
  d.memory_reports = m.memory_reports;
  d.scopes = m.scopes.events();
  d.dropped_scopes = m.scopes.dropped();
  d.memory = m.phase_memory;
  d.steps = m.steps;
  const auto per_scope = [&](const std::vector<int64_t>& bytes) {
    const size_t n = std::min(d.scopes.size(), bytes.size());
    return std::vector<int64_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
  };
  d.scope_alloc_bytes = per_scope(m.memory->scope_alloc());
  d.scope_saved_bytes = per_scope(m.memory->scope_saved());
  // Merge threads: names re-interned into one global list, shape and parent indices offset.
  NameTable global_names;
  for (auto& tb : m.buffers) detail::merge_buffer(*tb, global_names, d);
  d.untimed_calls.resize(global_names.size(), 0);
  d.views_inside.resize(global_names.size(), 0);
  for (uint32_t i = 0; i < global_names.size(); ++i) d.names.emplace_back(global_names.name(i));
  for (auto& tb : m.buffers) d.thread_ids.push_back(tb->os_tid);
  // Empty for the next window; the buffers keep their capacity and resident pages, so a run
  // that records cycle after cycle does not grow.
  for (auto& tb : m.buffers) detail::clear_buffer(*tb);
  m.sampler.forget_reference();
  m.scopes.truncate(0);
  m.phase_memory.clear();
  m.steps.clear();
  return d;
}

}  // namespace llmprof::profile
