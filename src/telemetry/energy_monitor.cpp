#include "llmprof/telemetry/energy_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "llmprof/config/enums.h"
#include "llmprof/telemetry/energy_integrate.h"
#include "llmprof/telemetry/nvml.h"
#include "llmprof/telemetry/power_sampler.h"
#include "llmprof/telemetry/proc_cpu.h"
#include "llmprof/telemetry/rapl.h"

namespace llmprof::config {
LLMPROF_ENUM_NAMES(telemetry::ChannelKind, "energy.sources.channels.kind", "counter", "power",
                   "none");
}  // namespace llmprof::config

namespace llmprof::telemetry {

namespace {

constexpr const char* kEstimateSource = "estimate: cpu_tdp_w x utilisation";

// Slack beyond two sample periods for which the last power may be held past the newest sample:
// the train loop asks right after a step, before the sampler's next tick, and a slow read
// (NVML's energy counter, ~4 ms) or a /proc gap (under one tick) can make the newest older.
constexpr int64_t kHoldSlackNs = 100000000;

}  // namespace

std::string_view channel_kind_name(ChannelKind kind) {
  const std::string_view name = config::name(kind);
  return name == "?" ? "none" : name;  // "?": a cast outside the table
}

EnergyMonitor::EnergyMonitor(const config::EnergyConfig& cfg,
                             int64_t max_duration_s,
                             const std::string& proc_root)
    : cfg_(cfg) {
  if (!cfg_.enabled) return;
  auto probe = [this](std::unique_ptr<EnergySource> source) {
    Availability a = source->available();
    sources_.push_back({std::move(source), std::move(a)});
    return sources_.back().availability.available;
  };
  const bool rapl = probe(std::make_unique<RaplSource>(cfg_.sysfs_root));
  probe(std::make_unique<NvmlSource>(cfg_.nvml_library));
  // The estimate stands in for a CPU sensor only; with RAPL the TDP is not used.
  if (rapl && cfg_.cpu_tdp_w > 0) {
    notes_.push_back(fmt::format("energy: energy.cpu_tdp_w = {} ignored: RAPL measures the CPU",
                                 cfg_.cpu_tdp_w));
  }
  probe(std::make_unique<ProcCpuSource>(proc_root, rapl ? 0.0 : cfg_.cpu_tdp_w));
  setup(max_duration_s);
}

EnergyMonitor::EnergyMonitor(const config::EnergyConfig& cfg,
                             int64_t max_duration_s,
                             std::vector<std::unique_ptr<EnergySource>> sources)
    : cfg_(cfg) {
  if (!cfg_.enabled) return;
  for (auto& source : sources) {
    Availability a = source->available();
    sources_.push_back({std::move(source), std::move(a)});
  }
  setup(max_duration_s);
}

EnergyMonitor::~EnergyMonitor() { stop(); }

void EnergyMonitor::setup(int64_t max_duration_s) {
  std::vector<EnergySource*> live;
  std::string missing;  // "rapl: <reason>; nvml: <reason>"
  for (const SourceState& s : sources_) {
    if (!s.availability.available) {
      missing += fmt::format("{}{}: {}", missing.empty() ? "" : "; ", s.source->name(),
                             s.availability.reason);
      continue;
    }
    for (const ChannelInfo& info : s.source->channels()) {
      if (info.in_total && info.kind != ChannelKind::kNone)
        total_channels_.push_back(channels_.size());
      channels_.push_back({info, channels_.size()});
    }
    live.push_back(s.source.get());
  }
  if (total_channels_.empty()) {
    no_energy_reason_ =
        "no energy sensor available (" + (missing.empty() ? "none found" : missing) + ")";
    no_energy_reason_ += cfg_.cpu_tdp_w > 0
                             ? " and the cpu_tdp_w estimate needs /proc CPU utilisation"
                             : " and energy.cpu_tdp_w = 0 (set it to report an estimate)";
  }
  if (live.empty()) return;
  const int64_t hz = std::clamp<int64_t>(cfg_.sample_hz, 1, 1000);
  const int64_t duration_s = max_duration_s > 0 ? max_duration_s : kDefaultMaxDurationS;
  const size_t frames = static_cast<size_t>(hz) * static_cast<size_t>(duration_s) + 2;
  max_hold_ns_ = 2 * (1000000000 / hz) + kHoldSlackNs;
  sampler_ = std::make_unique<PowerSampler>(std::move(live), hz, frames);
}

void EnergyMonitor::start() {
  if (sampler_) sampler_->start();
}

void EnergyMonitor::stop() {
  if (sampler_) sampler_->stop();
}

std::string EnergyMonitor::source_label() const {
  std::vector<std::string> parts;
  for (size_t i : total_channels_) {
    const ChannelInfo& info = channels_[i].info;
    std::string part = info.estimated ? kEstimateSource : info.source;
    if (std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
  }
  return fmt::format("{}", fmt::join(parts, " + "));
}

EnergyMonitor::ChannelResult EnergyMonitor::channel_energy(const Channel& ch,
                                                           size_t frames,
                                                           int64_t t0_ns,
                                                           int64_t t1_ns) const {
  ChannelResult out;
  const SampleRing& ring = sampler_->ring();
  const bool counter = ch.info.kind == ChannelKind::kCounter;
  const TraceView power = ring.trace(ch.ring_index, &Reading::power_w, frames);
  const TraceView energy = ring.trace(ch.ring_index, &Reading::energy_j, frames);
  const Integral in =
      counter ? counter_delta_j(energy, t0_ns, t1_ns) : integrate_power_j(power, t0_ns, t1_ns);
  if (in.empty || t0_ns < in.first_valid_ns) return out;  // before the first sample: unknown
  out.joules = in.joules;
  int64_t covered_to_ns = in.last_valid_ns;
  if (counter && t1_ns > covered_to_ns) {
    // Past the newest counter read, bridge with the channel's power readings if it has them
    // (NVML reads power every frame but its costly energy counter at most every ~100 ms).
    const int64_t from_ns = std::max(t0_ns, covered_to_ns);
    const Integral bridge = integrate_power_j(power, from_ns, t1_ns);
    if (!bridge.empty && bridge.first_valid_ns <= from_ns && bridge.covered_ns > 0) {
      out.joules += bridge.joules;
      covered_to_ns = from_ns + bridge.covered_ns;
    }
  }
  if (t1_ns > covered_to_ns) {  // after the newest sample: hold the last power, briefly
    const int64_t tail_ns = t1_ns - std::max(t0_ns, covered_to_ns);
    double power_w = 0;
    const bool known =
        last_power_w(power, false, &power_w) || (counter && last_power_w(energy, true, &power_w));
    if (tail_ns > max_hold_ns_ || !known) return out;
    out.joules += power_w * static_cast<double>(tail_ns) * 1e-9;
    out.held_ns = tail_ns;
  }
  out.ok = true;
  return out;
}

IntervalEnergy EnergyMonitor::step_energy(int64_t t0_ns, int64_t t1_ns) const {
  IntervalEnergy out;
  if (!sampler_ || total_channels_.empty() || t1_ns < t0_ns) return out;
  const size_t frames = sampler_->ring().size();
  double joules = 0;
  for (size_t i : total_channels_) {
    const ChannelResult r = channel_energy(channels_[i], frames, t0_ns, t1_ns);
    if (!r.ok) return IntervalEnergy{};  // a partial sum would undercount: unknown
    joules += r.joules;
    out.held_ns = std::max(out.held_ns, r.held_ns);
    out.estimated = out.estimated || channels_[i].info.estimated;
  }
  out.joules = joules;
  if (t1_ns > t0_ns) out.avg_power_w = joules / (static_cast<double>(t1_ns - t0_ns) * 1e-9);
  return out;
}

std::vector<DomainEnergy> EnergyMonitor::domain_energy(int64_t t0_ns, int64_t t1_ns) const {
  std::vector<DomainEnergy> out;
  const size_t frames = sampler_ ? sampler_->ring().size() : 0;
  for (const Channel& ch : channels_) {
    if (ch.info.kind == ChannelKind::kNone) continue;
    DomainEnergy d{ch.info.source, ch.info.domain, std::nullopt, ch.info.estimated,
                   ch.info.in_total};
    if (t1_ns >= t0_ns) {
      const ChannelResult r = channel_energy(ch, frames, t0_ns, t1_ns);
      if (r.ok) d.joules = r.joules;
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<PhaseEnergy> EnergyMonitor::phase_energy(
    const std::vector<PhaseSpan>& intervals) const {
  std::vector<PhaseEnergy> out;
  std::vector<bool> unknown;
  for (const PhaseSpan& iv : intervals) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const PhaseEnergy& p) { return p.phase == iv.phase; });
    if (it == out.end()) {
      out.push_back(PhaseEnergy{iv.phase, 0.0, 0, std::nullopt, false, 0});
      unknown.push_back(false);
      it = out.end() - 1;
    }
    const size_t k = static_cast<size_t>(it - out.begin());
    const IntervalEnergy e = step_energy(iv.t0_ns, iv.t1_ns);
    it->seconds += static_cast<double>(iv.t1_ns - iv.t0_ns) * 1e-9;
    it->intervals += 1;
    it->estimated = it->estimated || e.estimated;
    if (e.joules && !unknown[k]) {
      it->joules = *it->joules + *e.joules;
    } else {
      unknown[k] = true;
      it->joules.reset();
    }
  }
  for (PhaseEnergy& p : out) {
    if (p.joules && p.seconds > 0) p.avg_power_w = *p.joules / p.seconds;
  }
  return out;
}

double EnergyMonitor::frame_power_w(const Channel& ch, size_t k) const {
  const SampleRing& ring = sampler_->ring();
  const double power_w = ring.at(k, ch.ring_index).power_w;
  // A power reading when there is one: the slope of a coarse counter (NVML's updates ~10 Hz)
  // between close frames swings between 0 and twice the power.
  if (!std::isnan(power_w) || ch.info.kind != ChannelKind::kCounter) return power_w;
  const double e1 = ring.at(k, ch.ring_index).energy_j;
  if (std::isnan(e1)) return kNoValue;
  for (size_t j = k; j-- > 0;) {
    const double e0 = ring.at(j, ch.ring_index).energy_j;
    if (std::isnan(e0)) continue;
    const int64_t dt_ns = ring.t_ns(k) - ring.t_ns(j);
    return dt_ns > 0 ? (e1 - e0) * 1e9 / static_cast<double>(dt_ns) : kNoValue;
  }
  return kNoValue;
}

int64_t EnergyMonitor::sampler_cpu_ns() const { return sampler_ ? sampler_->cpu_ns() : 0; }

int64_t EnergyMonitor::sampler_wall_ns() const { return sampler_ ? sampler_->wall_ns() : 0; }

size_t EnergyMonitor::samples() const { return sampler_ ? sampler_->ring().size() : 0; }

bool EnergyMonitor::ring_full() const { return sampler_ && sampler_->ring_full(); }

std::vector<std::string> EnergyMonitor::availability_lines() const {
  if (!cfg_.enabled) return {"energy: disabled (energy.enabled = false)"};
  std::vector<std::string> lines;
  for (const SourceState& s : sources_) {
    if (!s.availability.available) {
      lines.push_back(
          fmt::format("energy: {} unavailable: {}", s.source->name(), s.availability.reason));
      continue;
    }
    std::vector<std::string> parts;
    for (const ChannelInfo& c : s.source->channels()) {
      parts.push_back(fmt::format("{} [{}]", c.domain, c.label));
    }
    lines.push_back(
        fmt::format("energy: {} available: {}", s.source->name(), fmt::join(parts, ", ")));
  }
  lines.insert(lines.end(), notes_.begin(), notes_.end());
  if (has_energy()) {
    lines.push_back(fmt::format(
        "energy: total from {}{}, sampled at {} Hz", source_label(),
        source_label().find("estimate") != std::string::npos ? " (estimated, not measured)" : "",
        std::clamp<int64_t>(cfg_.sample_hz, 1, 1000)));
  } else {
    lines.push_back("energy: total null: " + no_energy_reason_);
  }
  return lines;
}

}  // namespace llmprof::telemetry
