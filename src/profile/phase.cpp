#include "llmprof/profile/phase.h"

#include <algorithm>
#include <vector>

#include "llmprof/base/stats.h"

namespace llmprof::profile {

namespace {
constexpr std::string_view kPhaseNames[kNumPhases] = {"data", "forward", "backward", "optimizer",
                                                      "eval"};
}  // namespace

std::string_view phase_name(Phase phase) { return kPhaseNames[static_cast<int>(phase)]; }

std::optional<Phase> parse_phase(std::string_view name) {
  for (int i = 0; i < kNumPhases; ++i) {
    if (kPhaseNames[i] == name) return static_cast<Phase>(i);
  }
  return std::nullopt;
}

double measure_clock_read_ns() {
  constexpr int kReads = 20000;
  std::vector<double> per_read;
  for (int rep = 0; rep < 7; ++rep) {
    volatile int64_t sink = 0;
    int64_t t0 = now_ns();
    for (int i = 0; i < kReads; ++i) sink = sink + now_ns();
    int64_t t1 = now_ns();
    per_read.push_back(static_cast<double>(t1 - t0) / kReads);
  }
  return *median(per_read);  // of an odd count: the middle read
}

}  // namespace llmprof::profile
