// Process resource counters from getrusage(RUSAGE_SELF): page faults, context switches, CPU time
// and peak RSS. The loop reads them around each step (outside the timed region) so steps.csv shows
// why a step is slow: minor faults from malloc trimming, involuntary switches from spinning threads.
#pragma once

#include <cstdint>

namespace llmprof::telemetry {

struct RusageSnapshot {
  int64_t minor_faults = 0;
  int64_t major_faults = 0;
  int64_t voluntary_switches = 0;
  int64_t involuntary_switches = 0;
  int64_t cpu_user_ns = 0;
  int64_t cpu_system_ns = 0;
  int64_t max_rss_bytes = 0;  // peak resident set size so far
};

// Reads the counters of the whole process (all threads). One syscall, no allocation.
RusageSnapshot read_rusage();

// after - before for the counters; max_rss_bytes is after's.
RusageSnapshot rusage_delta(const RusageSnapshot& before, const RusageSnapshot& after);

// Current resident set size in bytes from /proc/self/statm; 0 if unreadable.
int64_t current_rss_bytes();

// Lowers the peak RSS (max_rss_bytes, VmHWM) to the current RSS through /proc/self/clear_refs
// (Linux >= 4.0), so a calibration's temporary buffers do not count as the run's peak. False when
// the kernel refuses.
bool reset_peak_rss();

}  // namespace llmprof::telemetry
