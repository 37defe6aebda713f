// Energy as a participant of the step (energy_participant.h).
#include "energy_participant.h"

#include <string>
#include <utility>

#include "llmprof/rundir/files.h"
#include "llmprof/rundir/tables.h"

namespace llmprof::train {

EnergyParticipant::EnergyParticipant(const config::EnergyConfig& cfg)
    : EnergyParticipant(std::make_unique<telemetry::EnergyMonitor>(cfg, /*max_duration_s=*/0)) {}

EnergyParticipant::EnergyParticipant(std::unique_ptr<telemetry::EnergyMonitor> monitor)
    : monitor_(std::move(monitor)) {}

EnergyParticipant::~EnergyParticipant() = default;

void EnergyParticipant::add_to_row(const profile::StepRecord& timing,
                                   int64_t end_ns,
                                   rundir::StepRow& row) {
  const telemetry::IntervalEnergy e = monitor_->step_energy(timing.start_ns, end_ns);
  row.energy_j = e.joules;
  row.avg_power_w = e.avg_power_w;
  if (e.joules) row.energy_estimated = e.estimated ? 1.0 : 0.0;
  for (int i = 0; i < timing.num_intervals; ++i) {
    const profile::PhaseInterval& iv = timing.intervals[i];
    phases_.push_back({std::string(profile::phase_name(iv.phase)), iv.start_ns, iv.end_ns});
  }
}

rundir::RunFigures EnergyParticipant::finish(const rundir::RunEnd& end) {
  monitor_->stop();
  rundir::RunFigures f;
  f.energy = monitor_->figures(end.tokens, end.flops, end.start_ns, end.end_ns, phases_);
  rundir::write_power(rundir::path(end.run_dir, rundir::kPower), monitor_->power_rows());
  return f;
}

}  // namespace llmprof::train
