// The writers of the run directory's tables. Column lists live here and nowhere else; the
// readers (run_loader.cpp) look the same names up.
#include "llmprof/rundir/tables.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "llmprof/gpu/kernel_table.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/profile/analysis.h"
#include "llmprof/rundir/files.h"
#include "llmprof/telemetry/energy_monitor.h"
#include "tables_columns.h"

namespace llmprof::rundir {

namespace {

std::optional<double> block_or_null(int block) {
  return block >= 0 ? std::optional<double>(block) : std::nullopt;
}

// Means over the recorded steps, rounded: bytes are whole (the steps column says how many).
int64_t whole_bytes(double bytes) { return std::llround(bytes); }

// The roofline columns (tables_columns.h order); unknown fields are empty.
void add_roofline(output::CsvWriter& csv, const profile::RooflinePoint& p) {
  csv.add(p.bytes ? std::optional<double>(std::round(*p.bytes)) : std::nullopt);
  csv.add(p.arithmetic_intensity).add(p.achieved_gflops_per_s).add(p.achieved_gb_per_s);
  if (p.bound) {
    csv.add(profile::bound_name(*p.bound));
  } else {
    csv.add_null();
  }
  csv.add(p.roofline_ms).add(p.unmodelled_ms).add(p.lost_ms);
}

std::vector<std::string> header(const std::vector<std::string_view>& names) {
  return {names.begin(), names.end()};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// steps.csv

const std::vector<StepColumn>& step_columns() {
  static const std::vector<StepColumn> kColumns = {
      {"loss", &StepRow::loss},
      {"lr", &StepRow::lr},
      {"grad_norm", &StepRow::grad_norm},
      {"tokens", &StepRow::tokens},
      {"data_ms", &StepRow::data_ms},
      {"forward_ms", &StepRow::forward_ms},
      {"backward_ms", &StepRow::backward_ms},
      {"optimizer_ms", &StepRow::optimizer_ms},
      {"step_ms", &StepRow::step_ms},
      {"eval_ms", &StepRow::eval_ms},
      {"tokens_per_s", &StepRow::tokens_per_s},
      {"flops", &StepRow::flops},
      {"flops_per_s", &StepRow::flops_per_s},
      {"mfu", &StepRow::mfu},
      {"minor_faults", &StepRow::minor_faults},
      {"major_faults", &StepRow::major_faults},
      {"voluntary_switches", &StepRow::voluntary_switches},
      {"involuntary_switches", &StepRow::involuntary_switches},
      {"cpu_ms", &StepRow::cpu_ms},
      {"max_rss_bytes", &StepRow::max_rss_bytes},
      {"energy_j", &StepRow::energy_j},
      {"avg_power_w", &StepRow::avg_power_w},
      {"energy_estimated", &StepRow::energy_estimated},
      {"host_step_ms", &StepRow::host_step_ms},
      {"gpu_step_ms", &StepRow::gpu_step_ms},
      {"gpu_data_ms", &StepRow::gpu_data_ms},
      {"gpu_forward_ms", &StepRow::gpu_forward_ms},
      {"gpu_backward_ms", &StepRow::gpu_backward_ms},
      {"gpu_optimizer_ms", &StepRow::gpu_optimizer_ms},
      {"device_peak_allocated_bytes", &StepRow::device_peak_allocated_bytes},
      {"device_reserved_bytes", &StepRow::device_reserved_bytes},
      {"device_free_reserved_bytes", &StepRow::device_free_reserved_bytes},
      {"device_alloc_retries", &StepRow::device_alloc_retries},
      {"loss_scale", &StepRow::loss_scale},
      {"step_skipped", &StepRow::step_skipped},
      {"slowest_rank", &StepRow::slowest_rank},
  };
  return kColumns;
}

std::vector<double> present(const std::vector<StepRow>& rows, std::string_view column,
                            size_t from) {
  std::vector<double> out;
  for (const StepColumn& c : step_columns()) {
    if (c.name != column) continue;
    for (size_t r = from; r < rows.size(); ++r) {
      if (const auto& v = rows[r].*c.field) out.push_back(*v);
    }
  }
  if (column == "step") {
    for (size_t r = from; r < rows.size(); ++r) out.push_back(static_cast<double>(rows[r].step));
  }
  return out;
}

namespace {
std::vector<std::string> step_header() {
  std::vector<std::string> names = {"step"};
  for (const StepColumn& c : step_columns()) names.emplace_back(c.name);
  return names;
}
}  // namespace

StepsWriter::StepsWriter(const std::string& path) : csv_(path, step_header()) {}

void StepsWriter::write(const StepRow& row) {
  csv_.add(row.step);
  for (const StepColumn& c : step_columns()) csv_.add(row.*c.field);
  csv_.end_row();
}

// ---------------------------------------------------------------------------------------------
// eval.csv

EvalWriter::EvalWriter(const std::string& path) : csv_(path, header(columns::kEval)) {}

void EvalWriter::write(const EvalRow& row) {
  csv_.add(row.step).add(std::string_view(row.split)).add(row.loss).add(row.perplexity);
  csv_.add(row.accuracy).add(row.eval_ms);
  csv_.end_row();
}

// ---------------------------------------------------------------------------------------------
// The deep-profiling tables.

void write_modules(const std::string& path, const profile::Analysis& a) {
  output::CsvWriter csv(path, header(columns::kModules), output::CsvMode::kWhole);
  for (const profile::ModuleRow& r : a.modules) {
    csv.add(std::string_view(r.scope)).add(block_or_null(r.block)).add(std::string_view(r.pass));
    csv.add(r.calls).add(r.total_ms).add(r.mean_ms).add(r.self_ms).add(r.share_of_pass);
    csv.add(r.flops).add(r.mfu);
    add_roofline(csv, r.roofline);
    csv.add(r.gpu_ms);
    csv.add(static_cast<int64_t>(a.n_steps));
    csv.end_row();
  }
  csv.commit();
}

// ops.csv: the recorded steps' ops (during "step", per step), then the eval passes' run inside
// the window (during "eval", per pass; evals says how many).
void write_ops(const std::string& path, const profile::Analysis& a) {
  output::CsvWriter csv(path, header(columns::kOps), output::CsvMode::kWhole);
  const auto write = [&](const profile::OpRow& r, bool eval) {
    csv.add(std::string_view(r.op)).add(r.calls);
    if (r.timed) {
      csv.add(r.self_ms).add(r.total_ms).add(r.self_share);
    } else {  // counted only: its times are unknown
      csv.add_null().add_null().add_null();
    }
    csv.add(r.flops);
    add_roofline(csv, r.roofline);
    csv.add(whole_bytes(r.alloc_bytes));
    csv.add(std::string_view(r.input_shapes));
    csv.add(r.view_calls);
    csv.add(r.gpu_ms);
    csv.add(static_cast<int64_t>(a.n_steps));
    csv.add(std::string_view(eval ? "eval" : "step"));
    if (eval) {
      csv.add(static_cast<int64_t>(a.n_evals));
    } else {
      csv.add_null();
    }
    csv.end_row();
  };
  for (const profile::OpRow& r : a.ops) write(r, false);
  for (const profile::OpRow& r : a.eval_ops) write(r, true);
  csv.commit();
}

void write_activations(const std::string& path, const profile::Analysis& a) {
  output::CsvWriter csv(path, header(columns::kActivations), output::CsvMode::kWhole);
  for (const profile::ActivationRow& r : a.activations) {
    csv.add(std::string_view(r.scope)).add(block_or_null(r.block)).add(whole_bytes(r.saved_bytes));
    csv.add(whole_bytes(r.alloc_bytes)).add(static_cast<int64_t>(a.n_steps));
    csv.end_row();
  }
  csv.commit();
}

void write_memory(const std::string& path,
                  const std::vector<profile::PhaseMemory>& intervals,
                  const std::vector<profile::StepPhases>& phases) {
  std::map<int32_t, int64_t> rss;
  for (const auto& p : phases) rss[p.step] = p.max_rss_bytes;
  output::CsvWriter csv(path, header(columns::kMemory), output::CsvMode::kWhole);
  for (const profile::PhaseMemory& m : profile::memory_per_phase(intervals)) {
    csv.add(static_cast<int64_t>(m.step));
    csv.add(profile::phase_name(static_cast<profile::Phase>(m.phase)));
    csv.add(m.peak_allocated_bytes).add(m.end_allocated_bytes);
    auto it = rss.find(m.step);
    if (it != rss.end()) {
      csv.add(it->second);
    } else {
      csv.add_null();
    }
    csv.end_row();
  }
  csv.commit();
}

// ---------------------------------------------------------------------------------------------
// power.csv and kernels.csv

void write_power(const std::string& path, const std::vector<telemetry::PowerRow>& rows) {
  auto number = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); };
  std::string out;
  for (size_t i = 0; i < columns::kPower.size(); ++i) {
    out += (i ? "," : "") + std::string(columns::kPower[i]);
  }
  out += '\n';
  for (const telemetry::PowerRow& r : rows) {
    fmt::format_to(std::back_inserter(out), "{:.6f},{},{},{},{},{},{}\n", r.t_s,
                   output::csv_field(r.source), output::csv_field(r.domain), number(r.watts),
                   number(r.joules_cum), number(r.utilisation), r.estimated ? 1 : 0);
  }
  output::write_file_atomic(path, out);
}

void write_kernels(const std::string& path, const gpu::GpuTables& t) {
  output::CsvWriter csv(path, header(columns::kKernels), output::CsvMode::kWhole);
  for (const gpu::KernelRow& r : t.kernels) {
    csv.add(std::string_view(r.kernel)).add(r.calls).add(r.total_us).add(r.mean_us);
    csv.add(r.min_us).add(r.max_us);
    csv.add(std::string_view(gpu::format_dim3(r.grid)));
    csv.add(std::string_view(gpu::format_dim3(r.block)));
    csv.add(static_cast<int64_t>(r.registers)).add(r.shared_mem_bytes).add(r.est_occupancy);
    csv.add(std::string_view(r.owning_op)).add(std::string_view(r.owning_scope));
    csv.add(static_cast<int64_t>(r.owners)).add(static_cast<int64_t>(t.n_steps));
    csv.end_row();
  }
  csv.commit();
}

}  // namespace llmprof::rundir
