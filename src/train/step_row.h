// What the loop knows about one finished step (raw ticks and counters, copied out of the timed
// region), and its steps.csv row (rundir writes the file).
#pragma once

#include <optional>

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
  std::optional<double> energy_j;     // null: no sensor and no estimate, or not covered
  std::optional<double> avg_power_w;
  bool energy_estimated = false;
};

// step_ms of a row, from its ticks.
inline double step_ms(const StepRow& r) {
  return static_cast<double>(r.timing.end_ns - r.timing.start_ns) * 1e-6;
}

// The steps.csv row: units converted, rates derived, what was not measured or told left null.
rundir::StepRow file_row(const StepRow& r);

}  // namespace llmprof::train
