// CSV writers of the deep-profiling tables (columns documented in README "The run directory").
#include <map>

#include "llmprof/output/csv.h"
#include "llmprof/profile/analysis.h"

namespace llmprof::profile {

namespace {
std::optional<double> block_or_null(int block) {
  return block >= 0 ? std::optional<double>(block) : std::nullopt;
}
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
    csv.add(r.flops).add(r.gflops_per_s).add(r.alloc_bytes).add(std::string_view(r.input_shapes));
    csv.add(static_cast<int64_t>(a.n_steps));
    csv.end_row();
  }
}

void write_activations_csv(const std::string& path, const Analysis& a) {
  output::CsvWriter csv(path, {"scope", "block", "saved_bytes", "alloc_bytes", "steps"});
  for (const ActivationRow& r : a.activations) {
    csv.add(std::string_view(r.scope)).add(block_or_null(r.block)).add(r.saved_bytes);
    csv.add(r.alloc_bytes).add(static_cast<int64_t>(a.n_steps));
    csv.end_row();
  }
}

void write_memory_csv(const std::string& path,
                      const TraceData& data,
                      const std::vector<StepPhases>& phases) {
  std::map<int32_t, int64_t> rss;
  for (const auto& p : phases) rss[p.step] = p.max_rss_bytes;
  output::CsvWriter csv(path, {"step", "phase", "peak_allocated_bytes", "end_allocated_bytes",
                               "rss_bytes"});
  for (const PhaseMemory& m : data.memory) {
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
