// The tracer's calibration of its own costs (calibration.h): each cost is the fastest of a few
// interleaved rounds with and without the instrumentation (one disturbed timing on a noisy host
// would otherwise skew every estimate of the window).
#include "calibration.h"

#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>

#include "memory_reporter.h"
#include "op_callbacks.h"
#include "thread_buffer.h"

namespace llmprof::profile::detail {

namespace {

// Time of n cheap ops (a 1-element add), for the per-event cost calibration.
int64_t time_probe_ops(int n) {
  at::Tensor a = torch::ones({1}), b = torch::ones({1});
  const int64_t t0 = now_ns();
  for (int i = 0; i < n; ++i) a.add_(b);
  return now_ns() - t0;
}

// Empties the calibrating thread's buffer of the probe events.
void clear_main(ThreadBuffer& main) {
  main.ops.clear();
  main.parents.clear();
  main.shapes.clear();
  main.depth = 0;
}

// Touches the first pages of the buffer so the calibration measures the callbacks, not page
// faults; returns how many events that covers (never past max_events).
size_t prefault(ThreadBuffer& main) {
  const size_t touch = std::min<size_t>(8192, main.ops.capacity());
  main.ops.resize(touch);
  main.parents.resize(touch);
  main.ops.clear();
  main.parents.clear();
  return touch;
}

// Time of n probe ops with the tracer's callbacks registered (FUNCTION scope), reading the ops'
// inputs or not.
int64_t time_with_callback(int n, bool read_inputs) {
  auto probe_cb = at::RecordFunctionCallback(on_start, on_end).needsInputs(read_inputs);
  probe_cb.scopes({at::RecordScope::FUNCTION});
  const at::CallbackHandle probe = at::addGlobalCallback(probe_cb);
  g_tracer.active.store(true);
  const int64_t ns = time_probe_ops(n);
  at::removeCallback(probe);
  g_tracer.active.store(false);
  return ns;
}

// LibTorch's part: the same ops observed by a callback that does nothing.
int64_t time_empty_callback(int n) {
  auto empty_cb = at::RecordFunctionCallback(
      [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> { return nullptr; },
      [](const at::RecordFunction&, at::ObserverContext*) {});
  empty_cb.scopes({at::RecordScope::FUNCTION});
  const at::CallbackHandle empty = at::addGlobalCallback(empty_cb);
  const int64_t ns = time_probe_ops(n);
  at::removeCallback(empty);
  return ns;
}

// Per recorded event: (time with the callback - without) / events recorded; LibTorch's own part
// per call; the extra per call of reading inputs (ops level).
void calibrate_events(ThreadBuffer& main, int probe_ops, bool ops, TracerCalibration& c) {
  time_probe_ops(probe_ops);  // warm
  int64_t off_ns = INT64_MAX, on_ns = INT64_MAX, empty_ns = INT64_MAX, reading_ns = INT64_MAX;
  size_t events = 0;
  for (int round = 0; round < 3; ++round) {
    off_ns = std::min(off_ns, time_probe_ops(probe_ops));
    on_ns = std::min(on_ns, time_with_callback(probe_ops, false));
    events = main.ops.size();
    clear_main(main);
    empty_ns = std::min(empty_ns, time_empty_callback(probe_ops));
    if (ops) {
      reading_ns = std::min(reading_ns, time_with_callback(probe_ops, true));
      clear_main(main);
    }
  }
  c.ns_per_call_record_function = std::max(0.0, static_cast<double>(empty_ns - off_ns) / probe_ops);
  if (ops) {
    c.ns_per_call_reading_shapes =
        std::max(0.0, static_cast<double>(reading_ns - on_ns) / probe_ops);
  }
  c.events_per_probe_op = static_cast<double>(events) / probe_ops;
  c.ns_per_event =
      events > 0 ? std::max(0.0, static_cast<double>(on_ns - off_ns) / static_cast<double>(events))
                 : 0.0;
}

// Time of n view calls (a select), observed or not.
int64_t time_views(const at::Tensor& v, int n) {
  const int64_t t0 = now_ns();
  for (int i = 0; i < n; ++i) (void)v.select(0, 1);
  return now_ns() - t0;
}

// Time of n switches of RecordFunction off and on (view sampling): with a callback registered,
// LibTorch rebuilds the thread's callback cache each time.
int64_t time_toggles(int n) {
  const int64_t t0 = now_ns();
  for (int i = 0; i < n; ++i) {
    at::enableRecordFunction(false);
    at::enableRecordFunction(true);
  }
  return now_ns() - t0;
}

// The same for an untimed view op (counted only), and the cost of hiding views around a call.
void calibrate_untimed_views(ThreadBuffer& main, int probe_ops, TracerCalibration& c) {
  const at::Tensor v = torch::ones({4});
  time_views(v, probe_ops);  // warm
  auto probe_cb = at::RecordFunctionCallback(on_start, on_end);
  probe_cb.scopes({at::RecordScope::FUNCTION});
  constexpr int kToggles = 2000;
  int64_t view_off = INT64_MAX, view_on = INT64_MAX, toggles = INT64_MAX, counted = 0;
  for (int round = 0; round < 3; ++round) {
    view_off = std::min(view_off, time_views(v, probe_ops));
    const at::CallbackHandle probe = at::addGlobalCallback(probe_cb);
    g_tracer.active.store(true);
    view_on = std::min(view_on, time_views(v, probe_ops));
    toggles = std::min(toggles, time_toggles(kToggles));
    at::removeCallback(probe);
    g_tracer.active.store(false);
    counted = 0;
    for (int64_t n : main.step_untimed) counted += n;
    std::fill(main.step_untimed.begin(), main.step_untimed.end(), 0);
  }
  c.ns_per_untimed_event =
      counted > 0
          ? std::max(0.0, static_cast<double>(view_on - view_off) / static_cast<double>(counted))
          : 0.0;
  c.ns_per_hidden_call = static_cast<double>(toggles) / kToggles;
}

// One scope = 2 clock reads + 2 sequence-number reads + the stores: time 20k of them.
double calibrate_scope_ns() {
  constexpr int kScopes = 20000;
  ScopeRecorder probe_scopes(kScopes,
                             [] { return static_cast<int64_t>(at::sequence_number::peek()); });
  set_active_scope_recorder(&probe_scopes);
  const int64_t t0 = now_ns();
  for (int i = 0; i < kScopes; ++i) {
    LLMPROF_SCOPE(Scope::kBlock, 0);
  }
  const double ns = static_cast<double>(now_ns() - t0) / kScopes;
  set_active_scope_recorder(nullptr);
  return ns;
}

// One memory report (an allocation or a free while the reporter is installed): N tensor
// allocations and frees with and without it, the fastest of a few interleaved tries (the
// reporter's tables exist before it sees its first free).
double calibrate_memory_report_ns(ThreadBuffer& main,
                                  const std::shared_ptr<MemoryReporter>& memory,
                                  size_t max_scope_events) {
  memory->reset_scope_tables(max_scope_events);
  constexpr int kAllocs = 2000;
  const auto time_allocs = [] {
    const int64_t t0 = now_ns();
    for (int i = 0; i < kAllocs; ++i) (void)at::empty({16});
    return now_ns() - t0;
  };
  time_allocs();
  int64_t without = INT64_MAX, with = INT64_MAX;
  for (int rep = 0; rep < 5; ++rep) {
    without = std::min(without, time_allocs());
    c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, memory);
    with = std::min(with, time_allocs());
  }
  main.step_memory_reports = 0;
  // Each allocation and its free report once.
  return std::max(0.0, static_cast<double>(with - without) / (2 * kAllocs));
}

}  // namespace

TracerCalibration calibrate_tracer(ThreadBuffer& main,
                                   const std::shared_ptr<MemoryReporter>& memory,
                                   const TracerOptions& options) {
  const bool ops = options.level >= Level::kOps;
  const int probe_ops = static_cast<int>(std::min<size_t>(4000, prefault(main) / 2));
  TracerCalibration c;
  calibrate_events(main, probe_ops, ops, c);
  if (ops && !options.record_view_ops) calibrate_untimed_views(main, probe_ops, c);
  clear_main(main);
  c.ns_per_scope = calibrate_scope_ns();
  c.ns_per_memory_report = calibrate_memory_report_ns(main, memory, options.max_scope_events);
  return c;
}

}  // namespace llmprof::profile::detail
