// The deep profiler behind profile.level=modules and =ops. During the schedule's active steps it
// records module scopes (forward), autograd nodes (backward; attributed to the forward scope that
// created them through their sequence numbers), aten ops (ops level, with input shapes for FLOP
// counting) and memory (c10's memory reporting hook: the mechanism torch.profiler's
// profile_memory uses). Everything goes into preallocated buffers; a full buffer stops recording
// with a warning. Torch-free header: the implementation is in tracer_torch.cpp and the private
// files it names (callbacks, memory reporter, calibration, buffers, sampling).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llmprof/profile/events.h"
#include "llmprof/profile/phase.h"
#include "llmprof/profile/scope.h"

namespace llmprof::profile {

struct TracerOptions {
  Level level = Level::kModules;
  bool record_shapes = false;   // shapes of every op (matmul-family shapes are always kept)
  bool record_view_ops = false; // time view/metadata ops too (else counted, not timed)
  size_t max_events = 2000000;  // op/node events per thread over the whole window
  size_t max_scope_events = 500000;
  size_t active_steps = 1;      // steps the window records: sizes the pre-touched buffer
  // ops: reading input shapes makes LibTorch box every op's arguments (~2x the callback's cost),
  // so they are read in the first and last recorded step of a cycle and between them N steps
  // after the first, then 2N after that, 4N, ... (each read that finds the shapes unchanged
  // doubles the gap); the other steps take them op by op from the last read step (1 = read every
  // step).
  int shape_interval = 8;
};

// How the recorded steps got their op shapes (ops level).
struct ShapeSampling {
  int64_t read_steps = 0;      // shapes read from the ops' inputs
  int64_t mapped_steps = 0;    // same op sequence as the last read step: its shapes, position by
                               // position, confirmed by the next read step
  int64_t unmapped_steps = 0;  // op sequence or shapes differed: no shapes (FLOPs, bytes unknown)
  int64_t unconfirmed_steps = 0;  // mapped, but the window ended before the next read step
  bool every_step = false;     // sampling stopped after a difference: every later step read
};

// View calls inside ops that, in the last read step, ran nothing but view ops (LibTorch 1.13's
// CPU bmm without MKL selects each operand and the result per matrix of the batch: 8-9 view
// calls per matrix). In the steps between read steps RecordFunction is switched off on the thread
// inside those calls, and their view calls are counted from the read step, op by op of the same
// sequence, confirmed by the next read step (ops level, views not timed, no other RecordFunction
// observer on the thread).
// An op hides its views between read steps when its calls ran at least this many view calls each
// in the read step: switching RecordFunction off and on costs about as much as observing 3-6.
constexpr int64_t kMinViewsToHide = 16;
struct ViewSampling {
  int64_t hidden_calls = 0;    // op calls that ran with RecordFunction off inside
  int64_t counted_views = 0;   // view calls counted from the read steps instead of observed
  int64_t mapped_steps = 0;    // steps whose hidden view calls were so counted and confirmed
  int64_t unconfirmed_steps = 0;  // counted, but the window ended before the next read step
  int64_t lost_steps = 0;      // hidden view calls not counted: the op sequence changed, or the
                               // next read step found other views in those ops
};

// Cost of the profiler's own instrumentation, measured by calibration.
struct TracerCalibration {
  double ns_per_event = 0;        // RecordFunction callback pair + recording
  double ns_per_call_record_function = 0;  // of which LibTorch's own part: an op call observed by
                                           // a callback that does nothing
  double ns_per_call_reading_shapes = 0;  // extra per op call (timed or counted) in a step that
                                          // reads shapes: LibTorch boxes the op's arguments
  double ns_per_untimed_event = 0;  // the same for a view op only counted
  double ns_per_hidden_call = 0;    // switching RecordFunction off and on around an op call
  double ns_per_memory_report = 0;  // c10's report of one allocation or free to the reporter
  double events_per_probe_op = 0;
  double ns_per_scope = 0;        // one scope enter + exit
};

// Everything recorded, merged over threads, after stop_window().
struct TraceData {
  std::vector<OpEvent> ops;         // ordered by thread then start
  std::vector<ShapeRecord> shapes;  // OpEvent::shape_id indexes these
  std::vector<std::string> names;   // OpEvent::name_id indexes these
  std::vector<int32_t> parents;     // per op event: index of the enclosing event, -1 at top
  // Per name id, over the recorded steps: calls of view/metadata ops counted without a timed
  // event (TracerOptions::record_view_ops false), and such calls made directly inside the op.
  std::vector<int64_t> untimed_calls;
  std::vector<int64_t> views_inside;
  std::vector<ScopeEvent> scopes;
  std::vector<int64_t> scope_alloc_bytes;  // per scope event: bytes allocated inside it
  std::vector<int64_t> scope_saved_bytes;  // per scope event: of those, live at forward end
  std::vector<PhaseMemory> memory;
  std::vector<int32_t> steps;       // the recorded steps
  int64_t dropped_events = 0;
  int64_t dropped_scopes = 0;
  int num_threads = 0;
  // Per OpEvent::thread: the OS thread id (gettid) of that recording thread, 0 = unknown. The
  // id space of CUPTI's runtime records, for correlating GPU work with ops.
  std::vector<uint64_t> thread_ids;
  TracerCalibration calibration;
  ShapeSampling shape_sampling;
  ViewSampling view_sampling;
  int64_t memory_reports = 0;  // allocations and frees reported in the recorded steps, every
                               // window so far
};

// Marks the ops recorded while it lives as an eval pass's: a pass run between steps inside a
// recorded window (`ScopedEval eval;` around it). They get rows of their own (ops.csv, during
// eval) and stay out of every per-step figure. Their OpEvent::phase is Phase::kEval, so marking
// costs no op anything (each reads the phase anyway). Between steps, on the loop's thread only.
class ScopedEval {
 public:
  ScopedEval();
  ~ScopedEval();
  ScopedEval(const ScopedEval&) = delete;
  ScopedEval& operator=(const ScopedEval&) = delete;
  ScopedEval(ScopedEval&&) = delete;
  ScopedEval& operator=(ScopedEval&&) = delete;

 private:
  uint8_t phase_;             // the phase ops read before
  bool log_views_, hide_views_;  // view sampling's state of the step before, restored after
};

class Tracer : public PhaseObserver {
 public:
  explicit Tracer(const TracerOptions& options);
  ~Tracer() override;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Registers the callbacks and the memory reporter, calibrates the per-event cost. Call
  // between steps (it allocates and measures).
  void start_window();
  // Unregisters everything; the recorded data stays until take_data().
  void stop_window();
  bool recording() const { return recording_; }

  // Marks steps inside the window: scopes record on this thread between the two calls; events
  // of warm-up steps of the schedule are recorded with keep=false and discarded at end_step
  // (and what ran between such a step and the next, an eval pass, at the next begin_step).
  void begin_step(int32_t step, bool keep);
  void end_step();

  void on_phase_begin(Phase phase) override;
  void on_phase_end(Phase phase) override;

  // Moves out the recorded data (names resolved, threads merged) and empties the buffers for
  // the next window (call between windows); their memory stays reserved.
  TraceData take_data();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool recording_ = false;
};

}  // namespace llmprof::profile
