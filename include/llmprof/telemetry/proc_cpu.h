// This process's CPU utilisation from procfs, and the energy estimate built on it when no sensor
// measures the CPU: utilisation = delta(utime + stime of <proc>/self/stat) / delta(all CPU time of
// <proc>/stat's "cpu" line), both in clock ticks, i.e. the process's share of all cores in [0, 1].
// With cpu_tdp_w > 0 the channel is ("estimate", "cpu"): power_w = cpu_tdp_w x utilisation over
// each sample interval, energy its running sum, always flagged estimated. Otherwise it is
// ("proc", "cpu"), utilisation only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmprof/telemetry/energy_source.h"

namespace llmprof::telemetry {

// Clock-tick totals read from procfs.
struct CpuTicks {
  uint64_t process_ticks = 0;  // utime + stime of this process (all threads)
  uint64_t machine_ticks = 0;  // user+nice+system+idle+iowait+irq+softirq+steal over all CPUs
};

// Parses utime + stime (fields 14 and 15) of a /proc/<pid>/stat line; false if malformed.
bool parse_process_stat(const char* text, uint64_t* ticks);

// Parses the aggregate "cpu " line of /proc/stat into the machine's total ticks; false if absent.
bool parse_machine_stat(const char* text, uint64_t* ticks);

class ProcCpuSource final : public EnergySource {
 public:
  // proc_root is "/proc" on a real machine; cpu_tdp_w > 0 turns on the estimate.
  explicit ProcCpuSource(std::string proc_root = "/proc", double cpu_tdp_w = 0);

  std::string_view name() const override { return cpu_tdp_w_ > 0 ? "estimate" : "proc"; }
  // Reads and parses both files once.
  Availability available() override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void start(int64_t now_ns) override;
  void stop() override {}
  void sample(int64_t now_ns, Reading* out) override;

 private:
  // Reads both counters; false on any read or parse error.
  bool read_ticks(CpuTicks* ticks) const;

  std::string self_stat_path_;
  std::string stat_path_;
  double cpu_tdp_w_;
  std::vector<ChannelInfo> channels_;
  CpuTicks last_{};
  int64_t last_ns_ = 0;
  bool has_last_ = false;
  double energy_j_ = 0;  // estimate: running sum since start()
};

}  // namespace llmprof::telemetry
