// What the loop knows about one finished step (raw ticks and counters, copied out of the timed
// region), and its steps.csv row (rundir writes the file).
#pragma once

#include <optional>

#include "llmprof/device/memory.h"
#include "llmprof/gpu/event_pool.h"
#include "llmprof/profile/phase.h"
#include "llmprof/rundir/tables.h"
#include "llmprof/telemetry/rusage.h"

namespace llmprof::train {

struct StepRow {
  profile::StepRecord timing;
  double loss = 0;
  double lr = 0;
  double grad_norm = 0;          // pre-clip global norm; NaN when clipping is off
  int64_t tokens = 0;            // 0: the loop did not say
  double flops = 0;              // analytic, per step; 0: not given
  double peak_flops_per_s = 0;
  std::optional<double> eval_ms;  // when this step ran an eval
  telemetry::RusageSnapshot rusage;  // deltas over the step
  bool phases_timed = false;
  // CUDA runs: the phases' device times (CUDA events), the caching allocator after the step, and
  // fp16's loss scale (with whether the scaler skipped the optimizer step).
  std::optional<gpu::GpuPhaseTimes> gpu;
  std::optional<device::DeviceMemory> device_memory;
  std::optional<double> loss_scale;
  bool step_skipped = false;
};

// The host's time of a step, from its ticks: on a CUDA device, the time to enqueue its work.
inline double host_step_ms(const StepRow& r) {
  return static_cast<double>(r.timing.end_ns - r.timing.start_ns) * 1e-6;
}

// The device's time of a step: its span between the events at its start and end (every level),
// else from the start of its first timed phase to the end of its last, on the device's clock;
// null off CUDA or when nothing was timed there.
std::optional<double> gpu_step_ms(const StepRow& r);

// The step's time for rates and MFU: the device's on CUDA (the host only enqueues work and runs
// ahead until a sync), the host's otherwise.
inline double step_ms(const StepRow& r) { return gpu_step_ms(r).value_or(host_step_ms(r)); }

// The steps.csv row: units converted, rates derived, what was not measured or told left null
// (the participants' columns, energy's, are theirs to add: rundir::RunParticipant::add_to_row).
rundir::StepRow file_row(const StepRow& r);

}  // namespace llmprof::train
