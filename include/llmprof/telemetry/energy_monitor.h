// The energy facade the train loop uses: builds the sources from EnergyConfig (RAPL under
// energy.sysfs_root, NVML from energy.nvml_library, /proc CPU utilisation and, when no sensor
// measures the CPU, the energy.cpu_tdp_w x utilisation estimate), runs the PowerSampler thread
// and answers energy questions about [t0_ns, t1_ns] intervals of llmprof::now_ns() time.
//
//   telemetry::EnergyMonitor energy(cfg.energy, /*max_duration_s=*/0);   // probes the sources
//   for (auto& line : energy.availability_lines()) spdlog::info("{}", line);
//   energy.start();                                  // before the first step's t0
//   ... after each step, outside the timed region:
//   telemetry::IntervalEnergy e = energy.step_energy(rec.start_ns, rec.end_ns);
//   ... at the end:
//   energy.stop();
//   summary.energy = energy.figures(tokens, flops, run_t0_ns, run_t1_ns, phase_spans);
//   rundir::write_power(path, energy.power_rows());
//
// Unknown energy is null (std::nullopt / JSON null) with a reason, never 0. Anything derived from
// the cpu_tdp_w estimate is flagged estimated everywhere.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/telemetry/energy_figures.h"
#include "llmprof/telemetry/energy_source.h"

namespace llmprof::telemetry {

class PowerSampler;

// Energy of one interval, summed over the channels that count toward the total.
struct IntervalEnergy {
  std::optional<double> joules;       // null when the samples do not cover the interval
  std::optional<double> avg_power_w;  // joules / interval length
  bool estimated = false;             // some of it comes from energy.cpu_tdp_w x utilisation
  int64_t held_ns = 0;  // tail after the newest sample, filled by holding the last power
};

// Energy of one channel over an interval.
struct DomainEnergy {
  std::string source;
  std::string domain;
  std::optional<double> joules;
  bool estimated = false;
  bool in_total = false;
};

// One timed stretch of a phase on the now_ns() clock; from a profile::PhaseInterval iv:
// {std::string(profile::phase_name(iv.phase)), iv.start_ns, iv.end_ns}.
struct PhaseSpan {
  std::string phase;  // "forward", "backward", ...
  int64_t t0_ns = 0;
  int64_t t1_ns = 0;
};

// A phase's energy summed over its intervals.
// One energy sample of one channel, as power.csv holds it. NaN = not measured.
struct PowerRow {
  double t_s = 0;  // since the first sample
  std::string source, domain;
  double watts = 0, joules_cum = 0, utilisation = 0;
  bool estimated = false;
};

struct PhaseEnergy {
  std::string phase;
  std::optional<double> joules;  // null if any of its intervals is not covered
  double seconds = 0;
  std::optional<double> avg_power_w;
  bool estimated = false;
  int64_t intervals = 0;
};

class EnergyMonitor {
 public:
  // Ring length used when max_duration_s <= 0: 24 h (10 Hz, 3 channels: 152 B/frame, ~130 MB
  // reserved, committed only as written, ~1.5 KB/s).
  static constexpr int64_t kDefaultMaxDurationS = 24 * 3600;

  // Probes every source now (files, dlopen, NVML init). The ring holds max_duration_s of samples
  // at energy.sample_hz; past that, recording stops with a warning. proc_root is for tests.
  EnergyMonitor(const config::EnergyConfig& cfg,
                int64_t max_duration_s,
                const std::string& proc_root = "/proc");
  // Uses the given sources instead of building them from cfg (tests, custom sources).
  EnergyMonitor(const config::EnergyConfig& cfg,
                int64_t max_duration_s,
                std::vector<std::unique_ptr<EnergySource>> sources);
  // Stops sampling if still running.
  ~EnergyMonitor();
  EnergyMonitor(const EnergyMonitor&) = delete;
  EnergyMonitor& operator=(const EnergyMonitor&) = delete;

  // Starts the sampler thread after taking a first sample. No-op when nothing is available.
  void start();
  // Takes a final sample and joins the thread. Idempotent.
  void stop();

  // True when some available channel counts toward total energy (measured or estimated).
  bool has_energy() const { return !total_channels_.empty(); }
  // Why energy is null (no sensor and no estimate); empty when has_energy().
  const std::string& no_energy_reason() const { return no_energy_reason_; }
  // "rapl", "rapl + nvml", "estimate: cpu_tdp_w x utilisation", ...; "" when none.
  std::string source_label() const;

  // Total energy over [t0_ns, t1_ns]. Lock-free read of the ring: safe while sampling. A tail
  // past the newest sample (at most 2 periods + 100 ms) holds the last power and sets held_ns;
  // the same call after stop() is exact.
  IntervalEnergy step_energy(int64_t t0_ns, int64_t t1_ns) const;
  // Energy of every energy channel over [t0_ns, t1_ns].
  std::vector<DomainEnergy> domain_energy(int64_t t0_ns, int64_t t1_ns) const;
  // Energy per phase, summed over its intervals, phases in first-seen order.
  std::vector<PhaseEnergy> phase_energy(const std::vector<PhaseSpan>& intervals) const;

  // The run's energy over [t0_ns, t1_ns] (summary.json "energy"); tokens and flops are the run's
  // totals (<= 0 = unknown). The sampler's CPU fraction is of one core over its wall time.
  EnergyFigures figures(int64_t tokens,
                        double flops,
                        int64_t t0_ns,
                        int64_t t1_ns,
                        const std::vector<PhaseSpan>& phases = {}) const;
  // power.csv's rows (rundir::write_power writes them); call after stop().
  std::vector<PowerRow> power_rows() const;

  // One line per source and a verdict, for the log ("energy: nvml unavailable: ...").
  std::vector<std::string> availability_lines() const;
  // The same as figures, for env.json's "energy" (rundir writes it).
  EnergyAvailability availability() const;

  // Sampler CPU time so far, in nanoseconds (0 before start()).
  int64_t sampler_cpu_ns() const;
  // Sampler wall time from start() to stop(), in nanoseconds.
  int64_t sampler_wall_ns() const;
  // Frames recorded so far.
  size_t samples() const;
  // True once the ring filled and recording stopped.
  bool ring_full() const;

 private:
  struct SourceState {
    std::unique_ptr<EnergySource> source;
    Availability availability;
  };
  struct Channel {
    ChannelInfo info;
    size_t ring_index = 0;  // channel index within a ring frame
  };
  struct ChannelResult {
    bool ok = false;
    double joules = 0;
    int64_t held_ns = 0;
  };

  // Builds the channel list, the no-energy reason and the sampler from probed sources.
  void setup(int64_t max_duration_s);
  // One channel's energy over [t0_ns, t1_ns] from the first frames frames; ok false if unknown.
  ChannelResult channel_energy(const Channel& ch,
                               size_t frames,
                               int64_t t0_ns,
                               int64_t t1_ns) const;
  // Power of channel ch at frame k: its power reading, else (counters) the slope from the
  // previous valid sample; NaN if neither.
  double frame_power_w(const Channel& ch, size_t k) const;
  // The run's peak power and each channel's figures over [t0_ns, t1_ns].
  void add_channel_figures(EnergyFigures& e, int64_t t0_ns, int64_t t1_ns, double seconds) const;

  config::EnergyConfig cfg_;
  std::vector<SourceState> sources_;
  std::vector<Channel> channels_;       // every sampled channel, ring order
  std::vector<size_t> total_channels_;  // indices into channels_ that count toward the total
  std::vector<std::string> notes_;      // extra availability lines
  std::string no_energy_reason_;
  int64_t max_hold_ns_ = 0;
  std::unique_ptr<PowerSampler> sampler_;
};

}  // namespace llmprof::telemetry
