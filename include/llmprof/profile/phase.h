// Step phases and the preallocated per-step record the train loop times them into.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "llmprof/base/clock.h"
#include "llmprof/config/enums.h"
#include "llmprof/profile/nvtx.h"

namespace llmprof::profile {

// Phases of a training step. Values are stable: they index arrays and name CSV columns.
enum class Phase : int { kData = 0, kForward = 1, kBackward = 2, kOptimizer = 3, kEval = 4 };
inline constexpr int kNumPhases = 5;
// The phases of the optimizer step itself, the first four values (eval runs between steps):
// a data-parallel rank's phase spans (phases.csv) and the communication analysis are of these.
inline constexpr int kNumStepPhases = 4;

// "data", "forward", "backward", "optimizer", "eval"; and back (nullopt: no phase of that name).
std::string_view phase_name(Phase phase);
std::optional<Phase> parse_phase(std::string_view name);

// Profiling depth (profile.level), ordered: each level includes the previous. The config's enum,
// so its one name table serves both (config::name, config::parse_enum).
using Level = config::ProfileLevel;

// The base clock (llmprof/base/clock.h), kept under its old name for code that says profile::.
using llmprof::now_ns;

// One timed phase interval of a step, on the now_ns() clock (energy attribution, trace).
struct PhaseInterval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  Phase phase = Phase::kData;
};

// One step's timings in nanoseconds. Phases accumulate (grad accumulation runs data, forward and
// backward once per micro-batch); the first kMaxIntervals intervals are also kept one by one.
struct StepRecord {
  static constexpr int kMaxIntervals = 48;
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;                       // end of the optimizer phase (eval excluded)
  std::array<int64_t, kNumPhases> phase_ns{};  // 0 where not timed
  int64_t clock_reads = 0;                  // timer events this step, for the overhead estimate
  std::array<PhaseInterval, kMaxIntervals> intervals{};
  int num_intervals = 0;                    // intervals kept (more are summed in phase_ns only)
  // The process's peak resident set size at the step's end (getrusage), set by whoever reads it
  // after the timed step (the Session, before its participants' after_step); 0: not read.
  int64_t max_rss_bytes = 0;
};

// Told when a timed phase begins and ends (the deep profiler tracks memory per phase, the memory
// probe reads the allocator, data parallelism logs its spans). Called outside the phase's own
// clock reads. A step's participants (llmprof/profile/participant.h) are its observers.
class PhaseObserver {
 public:
  virtual ~PhaseObserver() = default;
  virtual void on_phase_begin(Phase phase) = 0;
  virtual void on_phase_end(Phase phase) = 0;
};

// Times phases on a device too (CUDA events: gpu::PhaseEventPool). begin() enqueues the phase's
// start and returns a slot for end(); -1 = not timed. Called inside the phase's host clock reads.
class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual int begin(Phase phase) = 0;
  virtual void end(int slot) = 0;
};

// Times the phases of the current step when enabled (level >= phases); at level off only the
// step boundaries are read. Holds one record: the loop copies it out after the step. Its
// observers sit in fixed slots, every one told of every phase: begins in the order added, ends in
// the reverse order (the first added is outermost).
class PhaseRecorder {
 public:
  explicit PhaseRecorder(bool phases_enabled) : enabled_(phases_enabled) {}
  bool enabled() const { return enabled_; }

  void begin_step(int64_t step) {
    record_ = StepRecord{};
    record_.step = step;
    record_.start_ns = now_ns();
    record_.clock_reads = 1;
  }
  void end_step() {
    record_.end_ns = now_ns();
    ++record_.clock_reads;
  }
  void add(Phase phase, int64_t start_ns, int64_t end_ns) {
    record_.phase_ns[static_cast<int>(phase)] += end_ns - start_ns;
    if (record_.num_intervals < StepRecord::kMaxIntervals) {
      record_.intervals[record_.num_intervals++] = {start_ns, end_ns, phase};
    }
  }
  static constexpr int kMaxObservers = 8;
  // Adds an observer for every later phase; false when the slots are full (kMaxObservers).
  bool add_observer(PhaseObserver* observer) {
    if (num_observers_ >= kMaxObservers) return false;
    observers_[static_cast<size_t>(num_observers_++)] = observer;
    return true;
  }
  int num_observers() const { return num_observers_; }
  void notify_begin(Phase phase) const {
    for (int i = 0; i < num_observers_; ++i)
      observers_[static_cast<size_t>(i)]->on_phase_begin(phase);
  }
  void notify_end(Phase phase) const {
    for (int i = num_observers_ - 1; i >= 0; --i) {
      observers_[static_cast<size_t>(i)]->on_phase_end(phase);
    }
  }
  void set_device_timer(DeviceTimer* timer) { device_timer_ = timer; }
  DeviceTimer* device_timer() const { return device_timer_; }
  void count_reads(int64_t n) { record_.clock_reads += n; }
  const StepRecord& record() const { return record_; }

 private:
  bool enabled_;
  StepRecord record_;
  std::array<PhaseObserver*, kMaxObservers> observers_{};
  int num_observers_ = 0;
  DeviceTimer* device_timer_ = nullptr;
};

// RAII phase timer: `ScopedPhase phase(recorder, Phase::kForward);`. No allocation, no locks:
// two clock reads and an add into the preallocated record, or nothing when phases are off.
class ScopedPhase {
 public:
  ScopedPhase(PhaseRecorder& recorder, Phase phase)
      : recorder_(recorder), phase_(phase), nvtx_(nvtx::enabled()) {
    recorder_.notify_begin(phase_);
    if (nvtx_) nvtx::push(phase_name(phase_).data());  // profile.nvtx: the phase as a range
    start_ns_ = recorder_.enabled() ? now_ns() : 0;
    if (recorder_.device_timer() != nullptr) device_slot_ = recorder_.device_timer()->begin(phase_);
  }
  ~ScopedPhase() {
    if (recorder_.device_timer() != nullptr) recorder_.device_timer()->end(device_slot_);
    if (recorder_.enabled()) {
      recorder_.add(phase_, start_ns_, now_ns());
      recorder_.count_reads(2);
    }
    if (nvtx_) nvtx::pop();
    recorder_.notify_end(phase_);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;
  ScopedPhase(ScopedPhase&&) = delete;
  ScopedPhase& operator=(ScopedPhase&&) = delete;

 private:
  PhaseRecorder& recorder_;
  Phase phase_;
  bool nvtx_;
  int64_t start_ns_ = 0;
  int device_slot_ = -1;
};

// Measured cost of one now_ns() read, in nanoseconds (median of repeated batches).
double measure_clock_read_ns();

}  // namespace llmprof::profile
