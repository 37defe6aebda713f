// EnergyMonitor's outputs: the run's energy figures (summary.json "energy"), env.json availability and power.csv.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "llmprof/error.h"
#include "llmprof/telemetry/energy_monitor.h"
#include "llmprof/telemetry/power_sampler.h"

namespace llmprof::telemetry {

namespace {


// The default energy.grid_gco2_per_kwh and where it comes from.
constexpr const char* kDefaultGridSource =
    "default: 475 gCO2/kWh, IEA world-average carbon intensity of electricity (Global Energy & "
    "CO2 Status Report 2019), as used by CodeCarbon and the ML CO2 Impact calculator";

std::optional<double> number_or_null(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

// Running mean / max of the valid values of one field.
struct FieldStats {
  double sum = 0;
  double max = kNoValue;
  int64_t n = 0;
  void add(double v) {
    if (std::isnan(v)) return;
    sum += v;
    max = std::isnan(max) || v > max ? v : max;
    ++n;
  }
  double mean() const { return n > 0 ? sum / static_cast<double>(n) : kNoValue; }
};

}  // namespace

EnergyFigures EnergyMonitor::figures(int64_t tokens,
                                     double flops,
                                     int64_t t0_ns,
                                     int64_t t1_ns,
                                     const std::vector<PhaseSpan>& phases) const {
  EnergyFigures e;
  if (!cfg_.enabled) {
    e.reason = "energy.enabled = false";
    return e;
  }
  SamplerCost& cost = e.sampler.emplace();
  for (const SourceState& s : sources_) {
    if (!s.availability.available) {
      cost.unavailable.push_back({std::string(s.source->name()), s.availability.reason});
    }
  }
  cost.cpu_ms = static_cast<double>(sampler_cpu_ns()) * 1e-6;
  const int64_t wall_ns = sampler_wall_ns();
  if (wall_ns > 0) cost.cpu_fraction = static_cast<double>(sampler_cpu_ns()) / wall_ns;
  const IntervalEnergy total = step_energy(t0_ns, t1_ns);
  e.total_j = total.joules;
  if (!total.joules) {
    e.reason = !has_energy() ? no_energy_reason_
                             : fmt::format(
                                   "the run interval is not covered by the {} power "
                                   "samples{} (start() before the run, stop() after)",
                                   samples(), ring_full() ? " (buffer full)" : "");
    return e;
  }
  const double joules = *total.joules;
  const double seconds = static_cast<double>(t1_ns - t0_ns) * 1e-9;
  e.kwh = joules / 3.6e6;  // 1 kWh = 3.6 MJ
  if (tokens > 0 && joules > 0) e.tokens_per_j = static_cast<double>(tokens) / joules;
  if (flops > 0 && joules > 0) e.flops_per_j = flops / joules;  // (FLOP/s) / W
  if (seconds > 0) e.mean_power_w = joules / seconds;
  e.co2_g = *e.kwh * cfg_.grid_gco2_per_kwh;
  e.grid_gco2_per_kwh = cfg_.grid_gco2_per_kwh;
  e.grid_source = cfg_.grid_gco2_per_kwh == config::EnergyConfig{}.grid_gco2_per_kwh
                      ? kDefaultGridSource
                      : "energy.grid_gco2_per_kwh (config)";
  e.source = source_label();
  e.estimated = total.estimated;
  e.interval_s = seconds;
  e.sample_hz = sampler_->sample_hz();
  e.samples = static_cast<int64_t>(sampler_->ring().size());
  e.ring_full = ring_full();
  add_channel_figures(e, t0_ns, t1_ns, seconds);
  if (!phases.empty()) {
    e.phases.emplace();
    for (const PhaseEnergy& p : phase_energy(phases)) {
      (*e.phases)[p.phase] = {p.joules, p.seconds, p.avg_power_w, p.estimated, p.intervals};
    }
  }
  return e;
}

// Per-frame sums over the total's channels (peak) and per-channel statistics.
void EnergyMonitor::add_channel_figures(EnergyFigures& e,
                                        int64_t t0_ns,
                                        int64_t t1_ns,
                                        double seconds) const {
  const SampleRing& ring = sampler_->ring();
  const size_t frames = ring.size();
  double peak_w = kNoValue;
  const size_t nc = channels_.size();
  std::vector<FieldStats> power(nc), util(nc), temp(nc), mem(nc), clock(nc);
  for (size_t k = 0; k < frames; ++k) {
    if (ring.t_ns(k) < t0_ns || ring.t_ns(k) > t1_ns) continue;
    double sum_w = 0;
    for (size_t i : total_channels_) sum_w += frame_power_w(channels_[i], k);
    if (!std::isnan(sum_w) && (std::isnan(peak_w) || sum_w > peak_w)) peak_w = sum_w;
    for (size_t c = 0; c < channels_.size(); ++c) {
      const Reading& r = ring.at(k, channels_[c].ring_index);
      power[c].add(frame_power_w(channels_[c], k));
      util[c].add(r.utilisation);
      temp[c].add(r.temperature_c);
      mem[c].add(r.memory_used_bytes);
      clock[c].add(r.sm_clock_mhz);
    }
  }
  e.peak_power_w = number_or_null(peak_w);
  const std::vector<DomainEnergy> per_domain = domain_energy(t0_ns, t1_ns);
  for (size_t c = 0; c < channels_.size(); ++c) {
    const ChannelInfo& info = channels_[c].info;
    DomainFigures d;
    d.source = info.source;
    d.domain = info.domain;
    d.label = info.label;
    d.kind = std::string(channel_kind_name(info.kind));
    d.estimated = info.estimated;
    d.in_total = info.in_total;
    for (const DomainEnergy& de : per_domain) {
      if (de.source != info.source || de.domain != info.domain) continue;
      d.energy_j = de.joules;
      d.matched = true;
      d.mean_power_w = de.joules && seconds > 0 ? std::optional<double>(*de.joules / seconds)
                                                : std::nullopt;
    }
    if (info.kind != ChannelKind::kNone) d.peak_power_w = number_or_null(power[c].max);
    if (util[c].n > 0) d.mean_utilisation = util[c].mean();
    if (temp[c].n > 0) d.peak_temperature_c = temp[c].max;
    if (mem[c].n > 0) d.peak_memory_used_bytes = mem[c].max;
    if (clock[c].n > 0) d.mean_sm_clock_mhz = clock[c].mean();
    e.domains.push_back(std::move(d));
  }
}

EnergyAvailability EnergyMonitor::availability() const {
  EnergyAvailability a;
  a.enabled = cfg_.enabled;
  a.monitored = true;
  for (const SourceState& s : sources_) {
    SourceAvailability src{std::string(s.source->name()), s.availability.available, "", {}};
    if (!s.availability.available) src.reason = s.availability.reason;
    if (s.availability.available) {
      for (const ChannelInfo& c : s.source->channels()) {
        src.channels.push_back(
            {c.domain, c.label, std::string(channel_kind_name(c.kind)), c.estimated, c.in_total});
      }
    }
    a.sources.push_back(std::move(src));
  }
  a.sample_hz = cfg_.sample_hz;
  if (has_energy()) a.total_source = source_label();
  if (cfg_.enabled && !has_energy()) a.reason = no_energy_reason_;
  return a;
}

std::vector<PowerRow> EnergyMonitor::power_rows() const {
  std::vector<PowerRow> rows;
  if (!sampler_) return rows;
  const SampleRing& ring = sampler_->ring();
  const size_t frames = ring.size();
  std::vector<double> cum_j(channels_.size(), 0.0);  // power channels: running trapezoid
  std::vector<size_t> prev(channels_.size(), static_cast<size_t>(-1));
  for (size_t k = 0; k < frames; ++k) {
    const double t_s = static_cast<double>(ring.t_ns(k) - ring.t_ns(0)) * 1e-9;
    for (size_t c = 0; c < channels_.size(); ++c) {
      const Channel& ch = channels_[c];
      const Reading& r = ring.at(k, ch.ring_index);
      double watts = std::isnan(r.power_w) ? frame_power_w(ch, k) : r.power_w;
      double joules = kNoValue;
      if (ch.info.kind == ChannelKind::kCounter) {
        joules = r.energy_j;
      } else if (ch.info.kind == ChannelKind::kPower && !std::isnan(r.power_w)) {
        if (prev[c] != static_cast<size_t>(-1)) {
          const double dt_s = static_cast<double>(ring.t_ns(k) - ring.t_ns(prev[c])) * 1e-9;
          cum_j[c] += 0.5 * (ring.at(prev[c], ch.ring_index).power_w + r.power_w) * dt_s;
        }
        prev[c] = k;
        joules = cum_j[c];
      }
      if (std::isnan(watts) && std::isnan(joules) && std::isnan(r.utilisation)) continue;
      rows.push_back({t_s, ch.info.source, ch.info.domain, watts, joules, r.utilisation,
                      ch.info.estimated});
    }
  }
  return rows;
}

}  // namespace llmprof::telemetry
