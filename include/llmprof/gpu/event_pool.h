// GPU time of each step phase from CUDA events, the way llm.c's train_gpt2.cu times its step:
// events recorded into the stream around each phase, resolved after the step. The pool creates
// 2 events per interval for up to K intervals once, so the step itself only records into the next
// slot (no allocation, no sync); a full pool stops recording and counts overflows. After the
// step, resolve() waits once for the last event (the only host sync, outside the timed step) and
// reads each pair's elapsed time.
//
// The CUDA calls sit behind EventApi so the slot logic is tested with a fake; the real API
// (cuda_event_api.cpp) is compiled where the CUDA runtime is found.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "llmprof/profile/phase.h"

namespace llmprof::gpu {

// The CUDA event calls the pool makes. Event is an opaque handle (cudaEvent_t).
class EventApi {
 public:
  using Event = void*;
  virtual ~EventApi() = default;
  // cudaEventCreate (timing enabled). Throws GpuError.
  virtual Event create() = 0;
  virtual void destroy(Event event) noexcept = 0;
  // cudaEventRecord on the API's stream: enqueued, returns at once. Throws GpuError.
  virtual void record(Event event) = 0;
  // cudaEventSynchronize: blocks the host until the event has completed. Throws GpuError.
  virtual void synchronize(Event event) = 0;
  // cudaEventElapsedTime(start, end) in ms (both completed). Throws GpuError.
  virtual float elapsed_ms(Event start, Event end) = 0;
};

// The CUDA runtime's events on `stream` (a cudaStream_t; nullptr = the legacy default stream) of
// the current device. Throws GpuError when this llmprof was built without the CUDA runtime.
std::unique_ptr<EventApi> make_cuda_event_api(void* stream = nullptr);

// One timed interval on the GPU timeline, from the step's first recorded event.
struct GpuPhaseInterval {
  profile::Phase phase = profile::Phase::kData;
  double start_ms = 0;  // from the first begin event of the step
  double duration_ms = 0;
};

struct GpuPhaseTimes {
  std::array<std::optional<double>, profile::kNumPhases> phase_ms{};  // summed; null: not timed
  std::vector<GpuPhaseInterval> intervals;                            // in recording order
  int64_t overflows = 0;  // begin() calls refused this step (pool full)
  int64_t unclosed = 0;   // intervals begun but never ended (not timed)
  std::optional<double> step_ms;  // the whole step on the device (StepEventSpan); null: not timed
};

// The device's time of a whole step, from two events recorded on the API's stream at the step's
// start and end: at every profile level (off included), so that ms/step on a CUDA device is the
// device's, not the time the host took to enqueue the work.
class StepEventSpan {
 public:
  explicit StepEventSpan(EventApi& api);  // creates its two events; api must outlive it
  ~StepEventSpan();
  StepEventSpan(const StepEventSpan&) = delete;
  StepEventSpan& operator=(const StepEventSpan&) = delete;

  void begin();  // hot path: one event record
  void end();    // hot path: one event record
  // After the step: waits for the end event, then reads the span; null when end() was not called
  // since the last begin().
  std::optional<double> resolve();

 private:
  EventApi& api_;
  EventApi::Event begin_ = nullptr;
  EventApi::Event end_ = nullptr;
  bool closed_ = false;
};

class PhaseEventPool : public profile::DeviceTimer {
 public:
  // Creates 2 * max_intervals events through api (which must outlive the pool).
  PhaseEventPool(EventApi& api, int max_intervals);
  ~PhaseEventPool() override;
  PhaseEventPool(const PhaseEventPool&) = delete;
  PhaseEventPool& operator=(const PhaseEventPool&) = delete;

  // Starts a step: the slots are reused from the first.
  void begin_step();
  // Records the begin event of the next slot; returns the slot, or -1 when the pool is full
  // (counted in overflows). Hot path: one event record.
  int begin(profile::Phase phase) override;
  // Records the end event of slot (no-op for -1).
  void end(int slot) override;
  // After the step: waits for the last recorded event, then reads every closed interval.
  GpuPhaseTimes resolve();

  int capacity() const { return static_cast<int>(slots_.size()); }
  int used() const { return used_; }
  int64_t total_overflows() const { return total_overflows_; }

 private:
  struct Slot {
    EventApi::Event begin = nullptr;
    EventApi::Event end = nullptr;
    profile::Phase phase = profile::Phase::kData;
    bool ended = false;
  };
  EventApi& api_;
  std::vector<Slot> slots_;
  int used_ = 0;
  int64_t step_overflows_ = 0;
  int64_t total_overflows_ = 0;
  EventApi::Event last_recorded_ = nullptr;
};

// RAII GPU phase: `ScopedGpuPhase gpu_phase(pool, Phase::kForward);` (pool may be null: no-op).
class ScopedGpuPhase {
 public:
  ScopedGpuPhase(PhaseEventPool* pool, profile::Phase phase)
      : pool_(pool), slot_(pool != nullptr ? pool->begin(phase) : -1) {}
  ~ScopedGpuPhase() {
    if (pool_ != nullptr) pool_->end(slot_);
  }
  ScopedGpuPhase(const ScopedGpuPhase&) = delete;
  ScopedGpuPhase& operator=(const ScopedGpuPhase&) = delete;
  ScopedGpuPhase(ScopedGpuPhase&&) = delete;
  ScopedGpuPhase& operator=(ScopedGpuPhase&&) = delete;

 private:
  PhaseEventPool* pool_;
  int slot_;
};

}  // namespace llmprof::gpu
