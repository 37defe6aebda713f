// GPU idle analysis of one step (rules in idle.h).
#include "llmprof/gpu/idle.h"

#include <algorithm>
#include <array>
#include <limits>

namespace llmprof::gpu {

namespace {

struct Activity {
  int64_t start_ns;
  int64_t end_ns;
  bool htod;  // a host-to-device copy
};

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max(a0, b0) < std::min(a1, b1);
}

}  // namespace

std::string_view idle_cause_name(IdleCause cause) {
  static constexpr std::array<std::string_view, 3> kNames = {"host_bound", "data_bound",
                                                             "sync_bound"};
  return kNames[static_cast<size_t>(cause)];
}

StepIdle analyze_idle(int64_t step,
                      int64_t start_ns,
                      int64_t end_ns,
                      const GpuRecords& gpu,
                      const std::vector<HostInterval>& data_phases,
                      int32_t device) {
  StepIdle out;
  out.step = step;
  end_ns = std::max(end_ns, start_ns);
  out.window_ms = (end_ns - start_ns) * 1e-6;

  // All of the device's activity, sorted by start (not clipped: the activity that ends a gap
  // may start after the window, e.g. the next step's input copy).
  std::vector<Activity> acts;
  acts.reserve(gpu.kernels.size() + gpu.memcpys.size() + gpu.memsets.size());
  for (const KernelRecord& k : gpu.kernels) {
    if (k.device == device) acts.push_back({k.start_ns, k.end_ns, false});
  }
  for (const MemcpyRecord& m : gpu.memcpys) {
    if (m.device == device) acts.push_back({m.start_ns, m.end_ns, m.kind == CopyKind::kHtoD});
  }
  for (const MemsetRecord& m : gpu.memsets) {
    if (m.device == device) acts.push_back({m.start_ns, m.end_ns, false});
  }
  std::sort(acts.begin(), acts.end(), [](const Activity& a, const Activity& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.htod > b.htod;
  });

  // Host synchronizations, as intervals.
  std::vector<HostInterval> syncs;
  for (const SyncRecord& s : gpu.syncs) {
    if (sync_blocks_host(s.type)) syncs.push_back({s.start_ns, s.end_ns});
  }
  for (const RuntimeApiRecord& r : gpu.runtime) {
    if (r.api_class() == ApiClass::kSync) syncs.push_back({r.start_ns, r.end_ns});
  }

  auto classify = [&](int64_t g0, int64_t g1, const Activity* next) {
    for (const HostInterval& s : syncs) {
      if (overlaps(g0, g1, s.start_ns, s.end_ns)) return IdleCause::kSync;
    }
    if (next != nullptr && next->htod) {
      for (const HostInterval& d : data_phases) {
        if (overlaps(g0, g1, d.start_ns, d.end_ns)) return IdleCause::kData;
      }
    }
    return IdleCause::kHost;
  };
  auto add_gap = [&](int64_t g0, int64_t g1, const Activity* next) {
    if (g1 <= g0) return;
    const IdleCause cause = classify(g0, g1, next);
    out.gaps.push_back({g0, g1, cause});
    const double ms = (g1 - g0) * 1e-6;
    out.idle_ms += ms;
    (cause == IdleCause::kSync   ? out.sync_bound_ms
     : cause == IdleCause::kData ? out.data_bound_ms
                                 : out.host_bound_ms) += ms;
  };

  // Sweep: `covered` is the end of the busy union so far (clipped to the window).
  int64_t covered = start_ns;
  int64_t busy_ns = 0;
  for (const Activity& a : acts) {
    if (a.end_ns <= covered) continue;  // inside what is already busy (or before the window)
    if (a.start_ns >= end_ns) {         // the first activity after the window ends the last gap
      add_gap(covered, end_ns, &a);
      covered = end_ns;
      break;
    }
    const int64_t s = std::max(a.start_ns, covered);
    if (s > covered) add_gap(covered, s, &a);
    const int64_t e = std::min(a.end_ns, end_ns);
    busy_ns += e - s;
    covered = e;
    if (covered >= end_ns) break;
  }
  if (covered < end_ns) add_gap(covered, end_ns, nullptr);
  out.busy_ms = busy_ns * 1e-6;
  return out;
}

}  // namespace llmprof::gpu
