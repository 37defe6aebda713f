// CPU package and DRAM energy from Linux powercap RAPL: <root>/class/powercap/intel-rapl:N (a
// package; AMD Zen packages appear here too) and intel-rapl:N:M (its sub-zones: core, uncore,
// dram). Each zone's energy_uj is a microjoule counter that wraps at max_energy_range_uj.
// RAPL measures the whole package (every process on it), not this process alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmprof/telemetry/energy_source.h"

namespace llmprof::telemetry {

// Energy in microjoules from prev to cur of a counter that wraps to 0 after max_range_uj:
// cur >= prev ? cur - prev : (max_range_uj - prev) + cur.
uint64_t rapl_delta_uj(uint64_t prev_uj, uint64_t cur_uj, uint64_t max_range_uj);

class RaplSource final : public EnergySource {
 public:
  // sysfs_root is "/sys" on a real machine, a fake tree in tests.
  explicit RaplSource(std::string sysfs_root = "/sys");

  std::string_view name() const override { return "rapl"; }
  // Finds the zones and reads each energy_uj once; unavailable if none or any is unreadable.
  Availability available() override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void start(int64_t now_ns) override;
  void stop() override {}
  void sample(int64_t now_ns, Reading* out) override;

 private:
  struct Zone {
    std::string energy_path;  // <zone>/energy_uj
    uint64_t max_range_uj = 0;
    uint64_t last_uj = 0;   // raw counter at the previous read
    bool has_last = false;  // last_uj holds a real read (else the next read is the baseline)
    uint64_t total_uj = 0;  // unwrapped energy since start()
  };
  // Reads a zone's raw counter into value_uj; false on a read or parse error.
  bool read_counter(const Zone& zone, uint64_t* value_uj) const;

  std::string root_;
  std::vector<Zone> zones_;
  std::vector<ChannelInfo> channels_;
};

}  // namespace llmprof::telemetry
