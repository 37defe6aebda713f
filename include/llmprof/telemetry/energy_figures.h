// The energy figures of one run, as EnergyMonitor computes them; summary.json's "energy" section
// (rundir writes and reads it). No JSON here: the monitor returns figures.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::telemetry {

// A source that gave nothing, and why.
struct UnavailableSource {
  std::string source;  // rapl | nvml | ...
  std::string reason;
};

// One channel's share of the run.
struct DomainFigures {
  std::string source, domain, label;
  std::string kind;  // channel_kind_name(): counter | power | none
  bool estimated = false, in_total = false;
  std::optional<double> energy_j;
  bool matched = false;  // the channel had energy over the run: mean_power_w is written
  std::optional<double> mean_power_w;
  std::optional<double> peak_power_w;  // written unless kind is none
  // Written only where the channel reported them (n > 0).
  std::optional<double> mean_utilisation, peak_temperature_c, peak_memory_used_bytes,
      mean_sm_clock_mhz;
};

// One phase's energy, summed over its intervals.
struct PhaseEnergyFigures {
  std::optional<double> energy_j;
  double seconds = 0;
  std::optional<double> mean_power_w;
  bool estimated = false;
  int64_t intervals = 0;
};

// The sampler's own cost; absent when energy is off (energy.enabled=false).
struct SamplerCost {
  double cpu_ms = 0;
  std::optional<double> cpu_fraction;  // of one core over the sampling wall time
  std::vector<UnavailableSource> unavailable;
};

// The run's energy. Without total_j: the reason, and the sampler's cost where it ran.
struct EnergyFigures {
  std::optional<double> total_j;
  std::string reason;  // why total_j is null ("" when it is known)
  std::optional<SamplerCost> sampler;
  // Known only with total_j:
  std::optional<double> kwh;
  std::optional<double> tokens_per_j, flops_per_j, mean_power_w, peak_power_w;
  std::optional<double> co2_g;
  double grid_gco2_per_kwh = 0;
  std::string grid_source, source;
  bool estimated = false;
  double interval_s = 0;
  int64_t sample_hz = 0, samples = 0;
  bool ring_full = false;
  std::vector<DomainFigures> domains;
  std::optional<std::map<std::string, PhaseEnergyFigures>> phases;  // by phase name
};

// What the monitor found at start, for env.json's "energy": each source, available or not and
// why, with its channels. A run with energy off has only enabled and reason.
struct ChannelAvailability {
  std::string domain, label;
  std::string kind;  // channel_kind_name(): counter | power | none
  bool estimated = false, in_total = false;
};

struct SourceAvailability {
  std::string source;  // rapl | nvml | proc | ...
  bool available = false;
  std::string reason;  // why not; "" (not written) when available
  std::vector<ChannelAvailability> channels;  // empty when unavailable
};

struct EnergyAvailability {
  bool enabled = false;
  std::string reason;  // energy off, or on without a total; "" (not written) otherwise
  // Written when a monitor ran (energy.enabled=true): its sources, rate and total's source.
  bool monitored = false;
  std::vector<SourceAvailability> sources;
  int64_t sample_hz = 0;
  std::optional<std::string> total_source;  // null: no source gives the run's energy
};

}  // namespace llmprof::telemetry
