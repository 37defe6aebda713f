// load_run: every file of a run directory into typed rows, by the column names the writers print
// (tables_columns.h; tests/rundir writes every table and reads it back). Only steps.csv is
// required; each later file (modules.csv, ops.csv, memory.csv, activations.csv, summary.json) is
// read when present. Every file goes through one reader that leaves out what a killed run or full disk cut short
// (a last row, an empty file) into Run::warnings.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include "llmprof/base/numbers.h"
#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "llmprof/rundir/comm_tables.h"
#include "llmprof/rundir/env.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/rank_merge.h"
#include "llmprof/rundir/read.h"
#include "read_util.h"
#include "table_reader.h"

namespace fs = std::filesystem;

namespace llmprof::rundir {

namespace {

using detail::ColumnRead;
using detail::CsvFile;
using detail::custom;
using detail::field;
using detail::nested;
using detail::Need;
using detail::one_of;
using Warnings = std::vector<InputWarning>;

void flatten_yaml(const YAML::Node& node,
                  const std::string& prefix,
                  std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      std::string key = kv.first.as<std::string>();
      flatten_yaml(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else if (node.IsScalar()) {
    out[prefix] = node.Scalar();
  } else if (node.IsNull()) {
    out[prefix] = "";
  }
}

std::map<std::string, std::string> read_config(const std::string& path, Warnings& warnings) {
  std::map<std::string, std::string> out;
  if (!fs::exists(path)) return out;
  std::string text = detail::read_text(path);
  if (text.empty()) {
    warnings.push_back({"", path, 0, "empty file (0 bytes): killed run or full disk? Left out"});
    return out;
  }
  try {
    flatten_yaml(YAML::Load(text), "", out);
  } catch (const YAML::Exception& e) {
    throw DataError(fmt::format("{} line {}, col {}: invalid YAML: {}", path, e.mark.line + 1,
                                e.mark.column + 1, e.msg));
  }
  return out;
}

// A table of the run: every row through its column table (table_reader.h). Only steps.csv is
// required; an absent or empty side table gives no rows.
template <typename Row>
std::vector<Row> read_table(const std::string& path,
                            const std::vector<ColumnRead<Row>>& columns,
                            Warnings& warnings,
                            bool required = false) {
  if (!required && !fs::exists(path)) return {};
  std::optional<CsvFile> csv = detail::read_run_csv(path, warnings, required);
  return csv ? detail::read_rows(*csv, columns) : std::vector<Row>{};
}

// steps.csv: step and step_ms must be there; every other column of step_columns() may be absent
// in an older file.
const std::vector<ColumnRead<StepRow>>& step_reads() {
  static const std::vector<ColumnRead<StepRow>> kReads = [] {
    std::vector<ColumnRead<StepRow>> c = {field("step", &StepRow::step, Need::kValue)};
    for (const StepColumn& s : step_columns()) {
      c.push_back(field(s.name, s.field, s.name == "step_ms" ? Need::kColumn : Need::kOptional));
    }
    return c;
  }();
  return kReads;
}

const std::vector<ColumnRead<EvalRow>>& eval_reads() {
  static const std::vector<ColumnRead<EvalRow>> kReads = {
      field("step", &EvalRow::step, Need::kValue),
      field("split", &EvalRow::split, Need::kColumn),
      field("loss", &EvalRow::loss, Need::kValue),
      field("perplexity", &EvalRow::perplexity),
      field("accuracy", &EvalRow::accuracy),
      field("eval_ms", &EvalRow::eval_ms)};
  return kReads;
}

// The roofline columns of ops.csv and modules.csv (absent in runs written before them).
const std::vector<ColumnRead<RooflineColumns>>& roofline_reads() {
  using R = RooflineColumns;
  static const std::vector<ColumnRead<R>> kReads = {
      field("bytes", &R::bytes),
      field("arithmetic_intensity", &R::arithmetic_intensity),
      field("achieved_gflops_per_s", &R::achieved_gflops_per_s, Need::kOptional,
            "gflops_per_s"),  // its name before the roofline
      field("achieved_gb_per_s", &R::achieved_gb_per_s),
      one_of("bound", &R::bound, Need::kOptional, {"compute", "memory", "overhead"},
             /*empty_ok=*/true),
      field("roofline_ms", &R::roofline_ms),
      field("unmodelled_ms", &R::unmodelled_ms),
      field("lost_ms", &R::lost_ms)};
  return kReads;
}

// Cells are read in table order, which is the order the checks ran in before the table.
const std::vector<ColumnRead<ModuleRow>>& module_reads() {
  using M = ModuleRow;
  static const std::vector<ColumnRead<M>> kReads = [] {
    std::vector<ColumnRead<M>> c = nested(&M::roofline, roofline_reads());
    const std::vector<ColumnRead<M>> own = {
        field("scope", &M::scope, Need::kColumn),
        field("block", &M::block),
        field("calls", &M::calls),
        field("total_ms", &M::total_ms, Need::kValue),
        field("mean_ms", &M::mean_ms),
        field("self_ms", &M::self_ms),
        field("share_of_pass", &M::share_of_pass),
        field("flops", &M::flops),
        field("mfu", &M::mfu),
        field("steps", &M::steps),
        field("gpu_ms", &M::gpu_ms),
        one_of("pass", &M::pass, Need::kColumn, {"forward", "backward"}, /*empty_ok=*/false)};
    c.insert(c.end(), own.begin(), own.end());
    return c;
  }();
  return kReads;
}

const std::vector<ColumnRead<OpRow>>& op_reads() {
  using O = OpRow;
  static const std::vector<ColumnRead<O>> kReads = [] {
    std::vector<ColumnRead<O>> c = {
        // during: step (a training step's op) or eval; empty in files from before it.
        custom<O>("during", Need::kOptional,
                  [](O& o, const CsvFile& c, size_t r, int col) {
                    const std::string& when = c.text(r, col);
                    if (!when.empty() && when != "step" && when != "eval") {
                      throw DataError(fmt::format("{} line {}: column 'during': '{}' (expected "
                                                  "step|eval)",
                                                  c.path, c.lines[r], when));
                    }
                    o.eval = when == "eval";
                  }),
        field("evals", &O::evals),
        field("op", &O::op, Need::kColumn),
        field("calls", &O::calls),
        field("self_ms", &O::self_ms, Need::kColumn),  // empty for a view op counted untimed
        field("view_calls", &O::view_calls),
        field("total_ms", &O::total_ms),
        field("self_share", &O::self_share),
        field("flops", &O::flops)};
    const std::vector<ColumnRead<O>> roofline = nested(&O::roofline, roofline_reads());
    c.insert(c.end(), roofline.begin(), roofline.end());
    for (auto&& f : {field("alloc_bytes", &O::alloc_bytes), field("input_shapes", &O::input_shapes),
                     field("steps", &O::steps), field("gpu_ms", &O::gpu_ms)}) {
      c.push_back(f);
    }
    return c;
  }();
  return kReads;
}

const std::vector<ColumnRead<MemoryRow>>& memory_reads() {
  using M = MemoryRow;
  static const std::vector<ColumnRead<M>> kReads = {
      // A whole number of steps, written as a number: read as one (1.0 and 1 alike).
      custom<M>("step", Need::kValue,
                [](M& m, const CsvFile& c, size_t r, int col) {
                  m.step = static_cast<int64_t>(c.required_number(r, col));
                }),
      field("phase", &M::phase, Need::kColumn),
      field("peak_allocated_bytes", &M::peak_allocated_bytes),
      field("end_allocated_bytes", &M::end_allocated_bytes),
      field("rss_bytes", &M::rss_bytes)};
  return kReads;
}

const std::vector<ColumnRead<ActivationRow>>& activation_reads() {
  using A = ActivationRow;
  static const std::vector<ColumnRead<A>> kReads = {
      field("scope", &A::scope, Need::kColumn),
      field("block", &A::block),
      field("saved_bytes", &A::saved_bytes, Need::kColumn),
      field("alloc_bytes", &A::alloc_bytes),
      field("steps", &A::steps)};
  return kReads;
}

void fill_from_env(const std::string& path, Run& run) {
  if (!fs::exists(path)) return;
  std::error_code ec;
  if (fs::file_size(path, ec) == 0 && !ec) {
    run.warnings.push_back({"", path, 0, "empty file (0 bytes): killed run or full disk? Left out"});
    return;
  }
  const Env env = read_env(path);
  const auto as_double = [](const std::optional<int64_t>& v) -> std::optional<double> {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  };
  if (env.host) {
    run.host_memory_bytes = as_double(env.host->memory_bytes);
    run.host_cores = as_double(env.host->cores);
    run.native_bf16 = env.host->avx512_bf16.value_or(false) || env.host->amx_bf16.value_or(false);
  }
  if (env.peak_flops) {
    run.peak_flops_per_s = env.peak_flops->flops_per_s;
    run.peak_bf16_flops_per_s = env.peak_flops->bf16_flops_per_s;
  }
  if (env.peak_bandwidth) run.peak_bytes_per_s = env.peak_bandwidth->bytes_per_s;
  if (env.peak_comm) run.peak_busbw_bytes_per_s = env.peak_comm->busbw_bytes_per_s;
  if (env.torch && env.torch->version) run.torch_version = *env.torch->version;
}

// summary.json's plan section as the report's rows: bytes as numbers, the peak as
// "phase [/ module]".
void plan_view(const MemoryReconciliation& r, Run& run) {
  for (const ReconciledComponent& c : r.components) {
    run.plan.push_back({c.name, c.predicted_bytes, c.measured_bytes, c.ratio});
  }
  run.plan_peak_predicted = r.peak_phase.predicted;
  if (!r.peak_phase.predicted_module.empty()) {
    run.plan_peak_predicted += " / " + r.peak_phase.predicted_module;
  }
  run.plan_peak_measured = r.peak_phase.measured;
}

void fill_from_summary(const std::string& path, Run& run) {
  std::optional<Summary> summary = read_summary(path, run.warnings);
  if (!summary) {
    run.incomplete = true;
    return;
  }
  run.has_summary = true;
  run.status = summary->status;
  run.profile_level = summary->profile_level;
  run.message = summary->message;
  if (summary->steps) {
    run.summary_warmup_steps = summary->steps->warmup_excluded;
    run.summary_max_steps = summary->steps->max_steps;
  }
  if (summary->peak_rss_bytes) {
    run.summary_peak_rss_bytes = static_cast<double>(*summary->peak_rss_bytes);
  }
  run.energy = summary->energy;
  if (summary->context.model) run.gqa = summary->context.model->gqa;
  if (summary->distributed && !summary->distributed->rank) {  // a merged run's, not one rank's
    run.world_size = std::max<int64_t>(1, summary->distributed->world_size);
    run.rank_figures = summary->distributed->ranks;
    // Its MFU is against all ranks' peak (the merged summary's), not env.json's one rank's.
    if (summary->mfu && summary->mfu->peak_flops_per_s > 0 && !run.rank_figures.empty()) {
      run.peak_flops_per_s = summary->mfu->peak_flops_per_s;
    }
  }
  if (summary->context.plan) plan_view(*summary->context.plan, run);
}

}  // namespace

std::optional<Summary> read_summary(const std::string& path, Warnings& warnings) {
  if (!fs::exists(path)) return std::nullopt;
  std::error_code ec;
  if (fs::file_size(path, ec) == 0 && !ec) {
    warnings.push_back({"", path, 0, "empty file (0 bytes): killed run or full disk? Left out"});
    return std::nullopt;
  }
  return parse_summary(detail::read_text(path), path);
}

void detail::throw_unknown_name(const std::string& where,
                                std::string_view field,
                                std::string_view text,
                                const std::string_view* names,
                                size_t count) {
  throw DataError(fmt::format("{}: {} '{}' is not one of {}", where, field, printable(text),
                              fmt::join(names, names + count, "|")));
}

std::string why_no_rows(const Run& run, config::ProfileLevel needed) {
  const bool ops = needed >= config::ProfileLevel::kOps;
  const bool empty = ops ? run.ops.empty() : run.modules.empty();
  if (!run.profile_level || !empty) return "";
  const std::string_view file = ops ? kOps : kModules;
  if (*run.profile_level < needed) {
    return fmt::format("recorded at profile.level={}; {} needs profile.level={}",
                       config::name(*run.profile_level), file, config::name(needed));
  }
  return fmt::format("profile.level={}, but {} holds no rows", config::name(*run.profile_level),
                     file);
}

std::string Run::status_text() const {
  if (status) return std::string(config::name(*status));
  return std::string(config::name(has_summary ? NoStatus::kUnknown : NoStatus::kIncomplete));
}

std::optional<double> Run::config_number(const std::string& key) const {
  auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  return parse_number(it->second);
}

void disambiguate_labels(const std::vector<Run*>& runs) {
  std::vector<bool> shared;
  for (const Run* a : runs) {
    shared.push_back(std::count_if(runs.begin(), runs.end(),
                                   [&](const Run* b) { return b->label == a->label; }) > 1);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!shared[i]) continue;
    fs::path p = fs::path(runs[i]->dir).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();
    runs[i]->label = (p.parent_path().filename() / p.filename()).string();
  }
}

bool is_sweep_dir(const std::string& dir) { return fs::exists(path(dir, kSweepCsv)); }

namespace {

std::string rank_dir(const std::string& top, int64_t rank) {
  return fmt::format("{}/{}{}", top, kRankDirPrefix, rank);
}

// A data-parallel run that ended before rank 0 merged its top directory (killed, or a rank
// failed): the run is still the top directory, read from its ranks as the merge would have
// written it (rank_merge.h), rank 0's documents for the rest, and a warning saying so.
Run load_unmerged_top(const std::string& dir) {
  std::vector<std::vector<StepRow>> rows;
  Run run;
  for (int64_t r = 0; fs::exists(path(rank_dir(dir, r), kSteps)); ++r) {
    Run rank = load_run(rank_dir(dir, r));
    rows.push_back(std::move(rank.steps));
    if (r == 0) run = std::move(rank);
  }
  run.steps = merge_rank_steps(rows);
  run.world_size = static_cast<int64_t>(rows.size());
  run.dir = dir;
  fs::path p(dir);
  run.label = (p.filename().empty() ? p.parent_path().filename() : p.filename()).string();
  run.incomplete = true;
  run.warnings.push_back(
      {"", dir, 0,
       fmt::format("no merged documents at the top of this data-parallel run (it ended before "
                   "rank 0 merged them: killed, or a rank failed); its steps are merged here from "
                   "the {} ranks' steps.csv (the slowest rank's time, all ranks' tokens), the "
                   "rest is rank 0's (status {})",
                   rows.size(), run.status_text())});
  return run;
}

}  // namespace

Run load_run(const std::string& dir) {
  fs::path p(dir);
  if (!fs::is_directory(p)) throw DataError(detail::not_a_directory(dir));
  if (!fs::exists(path(dir, kSteps)) && fs::exists(path(rank_dir(dir, 0), kSteps))) {
    return load_unmerged_top(dir);
  }
  if (!fs::exists(path(dir, kSteps))) {
    throw DataError(
        fmt::format("'{}': not a run directory (no steps.csv) nor a sweep (no "
                    "sweep.csv)",
                    dir));
  }
  Run run;
  run.dir = dir;
  fs::path name = p.filename().empty() ? p.parent_path().filename() : p.filename();
  run.label = name.string();
  Warnings& w = run.warnings;
  run.config = read_config(path(dir, kConfig), w);
  fill_from_env(path(dir, kEnv), run);
  fill_from_summary(path(dir, kSummary), run);
  run.steps = read_table(path(dir, kSteps), step_reads(), w, /*required=*/true);
  run.evals = read_table(path(dir, kEval), eval_reads(), w);
  run.modules = read_table(path(dir, kModules), module_reads(), w);
  for (OpRow& o : read_table(path(dir, kOps), op_reads(), w)) {
    (o.eval ? run.eval_ops : run.ops).push_back(std::move(o));
  }
  run.memory = read_table(path(dir, kMemory), memory_reads(), w);
  run.activations = read_table(path(dir, kActivations), activation_reads(), w);
  if (fs::exists(path(dir, kCommSteps))) run.comm_steps = read_comm_steps(path(dir, kCommSteps));
  if (fs::exists(path(dir, kCollectives))) {
    run.collectives = read_collectives(path(dir, kCollectives));
  }
  if (!run.warnings.empty()) run.incomplete = true;
  return run;
}

}  // namespace llmprof::rundir
