// Energy as a participant of the step (llmprof/rundir/participant.h): telemetry's EnergyMonitor
// sampling for the Session's life, each step's energy into its row (steps.csv energy_j,
// avg_power_w, energy_estimated), and at the end the run's figures (summary.json "energy", per
// phase from the steps' phase intervals) and the samples (power.csv). The Session makes it when
// energy.enabled is true, before env.json (which lists its sources), and adds it first; it
// observes no phase, so it takes no observer slot.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/rundir/participant.h"
#include "llmprof/telemetry/energy_monitor.h"

namespace llmprof::train {

class EnergyParticipant : public rundir::RunParticipant {
 public:
  // Probes the sources of energy.* now (files, dlopen, NVML init).
  explicit EnergyParticipant(const config::EnergyConfig& cfg);
  // A monitor over sources of the caller's (tests, custom sources).
  explicit EnergyParticipant(std::unique_ptr<telemetry::EnergyMonitor> monitor);
  ~EnergyParticipant() override;
  EnergyParticipant(const EnergyParticipant&) = delete;
  EnergyParticipant& operator=(const EnergyParticipant&) = delete;

  // What the monitor found (env.json "energy") and its log lines.
  telemetry::EnergyAvailability availability() const { return monitor_->availability(); }
  std::vector<std::string> availability_lines() const { return monitor_->availability_lines(); }
  // Starts sampling: its first sample precedes the run's start.
  void start() { monitor_->start(); }

  std::string_view name() const override { return "energy"; }
  // The step's energy over [timing.start_ns, end_ns]; its phase intervals kept for the run's.
  void add_to_row(const profile::StepRecord& timing, int64_t end_ns, rundir::StepRow& row) override;
  // Stops sampling; the run's energy over [end.start_ns, end.end_ns] and power.csv.
  rundir::RunFigures finish(const rundir::RunEnd& end) override;

 private:
  std::unique_ptr<telemetry::EnergyMonitor> monitor_;
  std::vector<telemetry::PhaseSpan> phases_;  // every written step's phase intervals
};

}  // namespace llmprof::train
