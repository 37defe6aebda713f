#include "llmprof/telemetry/rusage.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace llmprof::telemetry {

namespace {
int64_t to_ns(const timeval& tv) {
  return static_cast<int64_t>(tv.tv_sec) * 1000000000 + static_cast<int64_t>(tv.tv_usec) * 1000;
}
}  // namespace

RusageSnapshot read_rusage() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  RusageSnapshot s;
  s.minor_faults = ru.ru_minflt;
  s.major_faults = ru.ru_majflt;
  s.voluntary_switches = ru.ru_nvcsw;
  s.involuntary_switches = ru.ru_nivcsw;
  s.cpu_user_ns = to_ns(ru.ru_utime);
  s.cpu_system_ns = to_ns(ru.ru_stime);
  s.max_rss_bytes = static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
  return s;
}

RusageSnapshot rusage_delta(const RusageSnapshot& before, const RusageSnapshot& after) {
  RusageSnapshot d;
  d.minor_faults = after.minor_faults - before.minor_faults;
  d.major_faults = after.major_faults - before.major_faults;
  d.voluntary_switches = after.voluntary_switches - before.voluntary_switches;
  d.involuntary_switches = after.involuntary_switches - before.involuntary_switches;
  d.cpu_user_ns = after.cpu_user_ns - before.cpu_user_ns;
  d.cpu_system_ns = after.cpu_system_ns - before.cpu_system_ns;
  d.max_rss_bytes = after.max_rss_bytes;
  return d;
}

int64_t current_rss_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages_total = 0, pages_resident = 0;
  int got = std::fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  std::fclose(f);
  if (got != 2) return 0;
  return static_cast<int64_t>(pages_resident) * sysconf(_SC_PAGESIZE);
}

}  // namespace llmprof::telemetry

namespace llmprof::telemetry {

bool reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool written = std::fputs("5", f) >= 0;  // 5: reset the peak RSS to the current RSS
  return std::fclose(f) == 0 && written;
}

}  // namespace llmprof::telemetry
