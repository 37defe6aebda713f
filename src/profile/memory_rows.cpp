// memory.csv's rows from the per-interval memory records (rundir writes the file).
#include <algorithm>
#include <map>

#include "llmprof/profile/analysis.h"

namespace llmprof::profile {

std::vector<PhaseMemory> memory_per_phase(const std::vector<PhaseMemory>& intervals) {
  std::vector<PhaseMemory> rows;
  std::map<std::pair<int32_t, uint8_t>, size_t> index;  // (step, phase) -> row
  for (const PhaseMemory& m : intervals) {
    auto [it, fresh] = index.emplace(std::make_pair(m.step, m.phase), rows.size());
    if (fresh) {
      rows.push_back(m);
      continue;
    }
    PhaseMemory& row = rows[it->second];
    row.peak_allocated_bytes = std::max(row.peak_allocated_bytes, m.peak_allocated_bytes);
    row.end_allocated_bytes = m.end_allocated_bytes;  // where the phase's last interval ended
  }
  return rows;
}

}  // namespace llmprof::profile
