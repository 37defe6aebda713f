// CSV writers of the deep-profiling tables (columns documented in README "The run directory").
#include <algorithm>
#include <cmath>
#include <map>

#include "llmprof/output/csv.h"
#include "llmprof/profile/analysis.h"

namespace llmprof::profile {

namespace {
std::optional<double> block_or_null(int block) {
  return block >= 0 ? std::optional<double>(block) : std::nullopt;
}

int64_t whole_bytes(double bytes) { return std::llround(bytes); }
}  // namespace

void write_modules_csv(const std::string& path, const Analysis& a) {
  output::CsvWriter csv(path, {"scope", "block", "pass", "calls", "total_ms", "mean_ms", "self_ms",
                               "share_of_pass", "flops", "mfu", "steps"});
  for (const ModuleRow& r : a.modules) {
    csv.add(std::string_view(r.scope)).add(block_or_null(r.block)).add(std::string_view(r.pass));
    csv.add(r.calls).add(r.total_ms).add(r.mean_ms).add(r.self_ms).add(r.share_of_pass);
    csv.add(r.flops).add(r.mfu).add(static_cast<int64_t>(a.n_steps));
    csv.end_row();
  }
}

void write_ops_csv(const std::string& path, const Analysis& a) {
  output::CsvWriter csv(path, {"op", "calls", "self_ms", "total_ms", "self_share", "flops",
                               "gflops_per_s", "alloc_bytes", "input_shapes", "steps"});
  for (const OpRow& r : a.ops) {
    csv.add(std::string_view(r.op)).add(r.calls).add(r.self_ms).add(r.total_ms).add(r.self_share);
    csv.add(r.flops).add(r.gflops_per_s).add(whole_bytes(r.alloc_bytes));
    csv.add(std::string_view(r.input_shapes));
    csv.add(static_cast<int64_t>(a.n_steps));
    csv.end_row();
  }
}

void write_activations_csv(const std::string& path, const Analysis& a) {
  output::CsvWriter csv(path, {"scope", "block", "saved_bytes", "alloc_bytes", "steps"});
  for (const ActivationRow& r : a.activations) {
    // Means over the recorded steps, rounded: bytes are whole (the steps column says how many).
    csv.add(std::string_view(r.scope)).add(block_or_null(r.block)).add(whole_bytes(r.saved_bytes));
    csv.add(whole_bytes(r.alloc_bytes)).add(static_cast<int64_t>(a.n_steps));
    csv.end_row();
  }
}

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

void write_memory_csv(const std::string& path,
                      const TraceData& data,
                      const std::vector<StepPhases>& phases) {
  std::map<int32_t, int64_t> rss;
  for (const auto& p : phases) rss[p.step] = p.max_rss_bytes;
  output::CsvWriter csv(path, {"step", "phase", "peak_allocated_bytes", "end_allocated_bytes",
                               "rss_bytes"});
  for (const PhaseMemory& m : memory_per_phase(data.memory)) {
    csv.add(static_cast<int64_t>(m.step)).add(phase_name(static_cast<Phase>(m.phase)));
    csv.add(m.peak_allocated_bytes).add(m.end_allocated_bytes);
    auto it = rss.find(m.step);
    if (it != rss.end()) {
      csv.add(it->second);
    } else {
      csv.add_null();
    }
    csv.end_row();
  }
}

}  // namespace llmprof::profile
