#include "llmprof/telemetry/proc_cpu.h"

#include <cstring>
#include <utility>

#include "read_text.h"

namespace llmprof::telemetry {

namespace {

constexpr size_t kStatBufferBytes = 1024;  // the "cpu " line comes first; the rest is not read

// Advances past n blank-separated fields.
const char* skip_fields(const char* p, int n) {
  for (int i = 0; i < n; ++i) {
    while (*p == ' ') ++p;
    if (*p == '\0' || *p == '\n') return nullptr;
    while (*p != ' ' && *p != '\0' && *p != '\n') ++p;
  }
  while (*p == ' ') ++p;
  return p;
}

}  // namespace

bool parse_process_stat(const char* text, uint64_t* ticks) {
  // "pid (comm) state ppid ...": comm may hold blanks and ')', so count fields after the last ')'.
  const char* close = std::strrchr(text, ')');
  if (close == nullptr) return false;
  // After ')' come field 3 (state) .. ; utime is field 14: skip fields 3..13 (11 fields).
  const char* p = skip_fields(close + 1, 11);
  if (p == nullptr) return false;
  std::optional<uint64_t> utime = detail::parse_u64(p);
  const char* q = skip_fields(p, 1);
  if (!utime || q == nullptr) return false;
  std::optional<uint64_t> stime = detail::parse_u64(q);
  if (!stime) return false;
  *ticks = *utime + *stime;
  return true;
}

bool parse_machine_stat(const char* text, uint64_t* ticks) {
  if (std::strncmp(text, "cpu ", 4) != 0) return false;
  // user nice system idle iowait irq softirq steal; guest and guest_nice are already in user/nice.
  const char* p = text + 4;
  uint64_t total = 0;
  for (int i = 0; i < 8; ++i) {
    while (*p == ' ') ++p;
    std::optional<uint64_t> v = detail::parse_u64(p);
    if (!v) {
      if (i >= 4) break;  // old kernels stop after idle/iowait
      return false;
    }
    total += *v;
    while (*p >= '0' && *p <= '9') ++p;
  }
  *ticks = total;
  return true;
}

ProcCpuSource::ProcCpuSource(std::string proc_root, double cpu_tdp_w)
    : self_stat_path_(proc_root + "/self/stat"),
      stat_path_(std::move(proc_root) + "/stat"),
      cpu_tdp_w_(cpu_tdp_w) {}

bool ProcCpuSource::read_ticks(CpuTicks* ticks) const {
  char buf[kStatBufferBytes];
  if (detail::read_text(self_stat_path_.c_str(), buf, sizeof(buf)) < 0) return false;
  if (!parse_process_stat(buf, &ticks->process_ticks)) return false;
  if (detail::read_text(stat_path_.c_str(), buf, sizeof(buf)) < 0) return false;
  return parse_machine_stat(buf, &ticks->machine_ticks);
}

Availability ProcCpuSource::available() {
  channels_.clear();
  char buf[kStatBufferBytes];
  for (const std::string* path : {&self_stat_path_, &stat_path_}) {
    int64_t n = detail::read_text(path->c_str(), buf, sizeof(buf));
    if (n < 0) return {false, detail::read_error(*path, static_cast<int>(-n))};
    uint64_t ticks = 0;
    bool ok = path == &self_stat_path_ ? parse_process_stat(buf, &ticks)
                                       : parse_machine_stat(buf, &ticks);
    if (!ok) return {false, *path + ": unexpected format"};
  }
  ChannelInfo ch;
  ch.domain = "cpu";
  if (cpu_tdp_w_ > 0) {
    ch.source = "estimate";
    ch.label = "energy.cpu_tdp_w x process CPU utilisation (estimated, not measured)";
    ch.kind = ChannelKind::kCounter;
    ch.estimated = true;
    ch.in_total = true;
  } else {
    ch.source = "proc";
    ch.label = "process CPU utilisation (share of all cores)";
    ch.kind = ChannelKind::kNone;
  }
  channels_.push_back(std::move(ch));
  return {true, ""};
}

void ProcCpuSource::start(int64_t /*now_ns*/) {
  energy_j_ = 0;
  has_last_ = false;  // the first good read in sample() is the baseline
}

void ProcCpuSource::sample(int64_t now_ns, Reading* out) {
  Reading& r = out[0];
  r = kEmptyReading;
  CpuTicks cur;
  if (!read_ticks(&cur)) return;  // a gap: the next good read spans it
  if (!has_last_) {
    // The baseline: the estimate counts from this sample, so (now_ns, 0 J) is an exact point.
    last_ = cur;
    last_ns_ = now_ns;
    has_last_ = true;
    if (cpu_tdp_w_ > 0) r.energy_j = energy_j_;
    return;
  }
  // Under one machine tick since the last update: no new information, and reporting the old sum
  // here would claim 0 W. Leave a gap; the next update spans it.
  if (cur.machine_ticks <= last_.machine_ticks || cur.process_ticks < last_.process_ticks) return;
  const uint64_t machine = cur.machine_ticks - last_.machine_ticks;
  const double util = static_cast<double>(cur.process_ticks - last_.process_ticks) / machine;
  r.utilisation = util > 1.0 ? 1.0 : util;
  if (cpu_tdp_w_ > 0) {
    r.power_w = cpu_tdp_w_ * r.utilisation;  // the average over (last_ns_, now_ns]
    energy_j_ += r.power_w * static_cast<double>(now_ns - last_ns_) * 1e-9;
    r.energy_j = energy_j_;
  }
  last_ = cur;
  last_ns_ = now_ns;
}

}  // namespace llmprof::telemetry
