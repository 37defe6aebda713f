// The interface every power/energy telemetry source implements (Kineto's IActivityProfiler, cut
// down): a name, availability with the reason when off, start, stop, and sample() writing one
// Reading per channel into a preallocated slot. A channel is one (source, domain) stream, e.g.
// ("rapl", "package-0"), ("nvml", "gpu0"), ("estimate", "cpu").
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::telemetry {

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// One channel's values at one sample time; NaN where the channel has no such value or the read
// failed. Trivial (no initialisers) so a preallocated ring of them is committed only as written;
// start every slot from kEmptyReading.
struct Reading {
  double energy_j;           // counter channels: cumulative energy since start()
  double power_w;            // instantaneous power (power channels) or interval average
  double utilisation;        // busy fraction in [0, 1] (GPU util, process share of all cores)
  double temperature_c;      // GPU temperature
  double sm_clock_mhz;       // GPU SM clock
  double memory_used_bytes;  // GPU memory in use
};
inline constexpr Reading kEmptyReading{kNoValue, kNoValue, kNoValue, kNoValue, kNoValue, kNoValue};

// How a channel's energy is obtained. Stable integers: they are written to metadata.
enum class ChannelKind : int {
  kCounter = 0,  // energy_j is a cumulative counter: energy = interpolated difference
  kPower = 1,    // power_w samples: energy = trapezoid integral
  kNone = 2,     // no energy (utilisation only)
};

// "counter", "power", "none".
std::string_view channel_kind_name(ChannelKind kind);

struct ChannelInfo {
  std::string source;  // "rapl", "nvml", "estimate", "proc"
  std::string domain;  // "package-0", "package-0/dram", "gpu0", "cpu"
  std::string label;   // human description: "NVIDIA H100 80GB HBM3", "whole CPU package"
  ChannelKind kind = ChannelKind::kNone;
  bool estimated = false;  // derived from an assumption (cpu_tdp_w), never "measured"
  bool in_total = false;   // counts toward the total (false for sub-domains inside a package)
};

struct Availability {
  bool available = false;
  std::string reason;  // why not, naming the file, library or call; empty when available
};

// A telemetry source. available() probes once (files, dlopen, init) and fixes channels();
// start/sample/stop run only when it said available. sample() runs on the sampler thread and
// must not allocate: it writes channels().size() readings starting at out.
class EnergySource {
 public:
  virtual ~EnergySource() = default;
  EnergySource() = default;
  EnergySource(const EnergySource&) = delete;
  EnergySource& operator=(const EnergySource&) = delete;

  // Short stable name: "rapl", "nvml", "proc".
  virtual std::string_view name() const = 0;
  // Probes the hardware or library; the result is cached by the caller.
  virtual Availability available() = 0;
  // The channels sample() fills, in order; valid after available() said yes.
  virtual const std::vector<ChannelInfo>& channels() const = 0;
  // Reads baselines so the first sample's cumulative energy is ~0.
  virtual void start(int64_t now_ns) = 0;
  // Ends sampling (no more sample() calls).
  virtual void stop() = 0;
  // Writes one Reading per channel into out[0 .. channels().size()).
  virtual void sample(int64_t now_ns, Reading* out) = 0;
};

}  // namespace llmprof::telemetry
