// build_report: load every input first (so a malformed file fails before any output), then the
// summary, per-run sections, sweep sections, the comparison and the footer.
#include "llmprof/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "tables.h"
#include "tuned_link.h"

namespace llmprof::report {

namespace {

struct Loaded {
  std::vector<std::unique_ptr<Run>> runs;
  std::vector<RunMetrics> run_metrics;
  std::vector<Sweep> sweeps;
  std::unique_ptr<Run> cmp_a, cmp_b;  // --compare A B, when given
  RunMetrics cmp_ma, cmp_mb;
};

// Where a table's figures come from, naming only the files that are there (the top directory of
// a multi-rank run has no eval.csv): "d/f1, d/f2" for one directory; "f1, f2 in d1, d2" for more
// when each holds every file, else each present path.
std::string files_in(std::vector<std::string> dirs, std::initializer_list<std::string_view> files) {
  std::vector<std::string> unique;
  for (auto& d : dirs) {
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(std::move(d));
  }
  dirs = std::move(unique);
  std::vector<std::string> present;
  for (const auto& d : dirs) {
    for (auto f : files) {
      std::error_code ec;
      if (std::filesystem::exists(rundir::path(d, f), ec)) present.push_back(rundir::path(d, f));
    }
  }
  if (dirs.size() > 1 && present.size() == dirs.size() * files.size()) {
    return fmt::format("{} in {}", fmt::join(files, ", "), fmt::join(dirs, ", "));
  }
  return fmt::format("{}", fmt::join(present, ", "));
}

// The table with its source files (Table::source) set.
Table with_source(Table t, std::string source) {
  t.source = std::move(source);
  return t;
}

// The files each compare table reads, of runs A and B.
std::string compare_source(const std::string& id, const Run& a, const Run& b) {
  std::vector<std::string> dirs = {a.dir, b.dir};
  if (id == "compare.modules") return files_in(dirs, {rundir::kModules});
  if (id == "compare.ops") return files_in(dirs, {rundir::kOps});
  if (id == "compare.outcome") return files_in(dirs, {rundir::kSummary, rundir::kEval});
  if (id == "compare.config") return files_in(dirs, {rundir::kConfig});
  return files_in(dirs, {rundir::kSteps, rundir::kEnv});
}

void add_run_sections(const Run& run, const RunMetrics& m, size_t top_ops, Document& doc) {
  const std::vector<std::string> dir = {run.dir};
  doc.tables.push_back(with_source(detail::phase_table(run, m), files_in(dir, {rundir::kSteps})));
  if (auto t = detail::module_table(run, m)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kModules})));
  }
  if (auto t = detail::ops_table(run, top_ops)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kOps})));
  }
  if (auto t = detail::roofline_ops_table(run, top_ops)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kOps, rundir::kEnv})));
  }
  if (auto t = detail::roofline_modules_table(run, top_ops)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kModules, rundir::kEnv})));
  }
  if (auto t = detail::memory_table(run, m)) {
    doc.tables.push_back(with_source(
        std::move(*t), files_in(dir, {rundir::kMemory, rundir::kSummary, rundir::kEnv})));
  }
  if (auto t = detail::plan_table(run)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kSummary})));
  }
  if (auto t = detail::gqa_table(run)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kSummary})));
  }
  if (auto t = detail::activations_table(run)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kActivations})));
  }
  if (auto t = detail::rank_figures_table(run)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kSummary})));
  }
  for (auto* make : {detail::comm_breakdown_table, detail::comm_straggler_table}) {
    if (auto t = make(run)) {
      doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kCommSteps})));
    }
  }
  if (auto t = detail::comm_bucket_table(run)) {
    doc.tables.push_back(with_source(std::move(*t), files_in(dir, {rundir::kCollectives})));
  }
  std::vector<Finding> findings = run_findings(run, m);
  attach_tried(findings, read_tried(run.dir));  // what `llmprof report --try` measured
  for (auto& f : findings) doc.findings.push_back(std::move(f));
  doc.findings_ran = true;
}

void add_sweep_sections(const Sweep& sweep, Document& doc) {
  std::vector<SweepConfig> configs = aggregate_sweep(sweep);
  std::string source = rundir::path(sweep.dir, rundir::kSweepCsv);
  doc.tables.push_back(with_source(detail::sweep_points_table(sweep, configs), source));
  if (!sweep.keys.empty()) {
    doc.tables.push_back(
        with_source(detail::sweep_pivot_table(sweep, configs, "val_loss"), source));
    doc.tables.push_back(
        with_source(detail::sweep_pivot_table(sweep, configs, "tokens_per_s"), source));
  }
  doc.tables.push_back(with_source(detail::sweep_best_table(sweep, configs), source));
  doc.tables.push_back(with_source(detail::sweep_pareto_table(sweep, configs), source));
}

void check_options(const ReportOptions& options) {
  if (options.inputs.empty() && options.compare.empty()) {
    throw UsageError("report: give at least one run or sweep directory, or --compare A B");
  }
  if (!options.compare.empty() && options.compare.size() != 2) {
    throw UsageError(fmt::format("report --compare: expected two run directories, got {}",
                                 options.compare.size()));
  }
}

Loaded load_report_inputs(const ReportOptions& options) {
  Loaded in;
  for (const auto& dir : options.inputs) {
    if (rundir::is_sweep_dir(dir)) {
      in.sweeps.push_back(rundir::load_sweep(dir));
    } else {
      in.runs.push_back(std::make_unique<Run>(rundir::load_run(dir)));
      in.run_metrics.push_back(compute_metrics(*in.runs.back()));
    }
  }
  for (size_t i = 0; i < options.compare.size(); ++i) {
    const std::string& dir = options.compare[i];
    if (rundir::is_sweep_dir(dir)) {
      throw UsageError(fmt::format("report --compare: '{}' is a sweep; compare two runs", dir));
    }
    auto run = std::make_unique<Run>(rundir::load_run(dir));
    (i == 0 ? in.cmp_ma : in.cmp_mb) = compute_metrics(*run);
    (i == 0 ? in.cmp_a : in.cmp_b) = std::move(run);
  }
  return in;
}

// The inputs line and, for a run made from a tuned configuration, where it came from.
void add_intro(const ReportOptions& options, const Loaded& in, Document& doc) {
  std::vector<std::string> all = options.inputs;
  if (!options.compare.empty()) {
    all.push_back(fmt::format("--compare A={} B={}", options.compare[0], options.compare[1]));
  }
  doc.intro.push_back(fmt::format("Inputs: {}", fmt::join(all, ", ")));
  for (const auto& run : in.runs) {
    if (std::string line = tuned_from_line(run->dir, run->label); !line.empty()) {
      doc.intro.push_back(std::move(line));
    }
  }
}

// Every run's label made unique, then the runs' and sweeps' warnings and incomplete inputs.
void add_warnings(Loaded& in, Document& doc) {
  std::vector<Run*> all_runs;
  for (auto& r : in.runs) all_runs.push_back(r.get());
  if (in.cmp_a) all_runs.insert(all_runs.end(), {in.cmp_a.get(), in.cmp_b.get()});
  rundir::disambiguate_labels(all_runs);
  for (const Run* run : all_runs) {
    for (InputWarning w : run->warnings) {
      w.run = run->label;
      doc.warnings.push_back(std::move(w));
    }
    if (run->incomplete) doc.incomplete_runs.push_back(run->label);
  }
  for (const Sweep& sweep : in.sweeps) {
    for (InputWarning w : sweep.warnings) {
      w.run = sweep.label;
      doc.warnings.push_back(std::move(w));
    }
    if (!sweep.warnings.empty()) doc.incomplete_runs.push_back(sweep.label);
  }
}

// One row per run, the compared runs A and B last.
void add_summary_table(const Loaded& in, Document& doc) {
  std::vector<const Run*> summary_runs;
  std::vector<RunMetrics> summary_metrics;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    summary_runs.push_back(in.runs[i].get());
    summary_metrics.push_back(in.run_metrics[i]);
  }
  if (in.cmp_a) {
    summary_runs.push_back(in.cmp_a.get());
    summary_metrics.push_back(in.cmp_ma);
    summary_runs.push_back(in.cmp_b.get());
    summary_metrics.push_back(in.cmp_mb);
  }
  if (summary_runs.empty()) return;
  std::vector<std::string> dirs;
  for (const Run* r : summary_runs) dirs.push_back(r->dir);
  doc.tables.push_back(
      with_source(detail::summary_table(summary_runs, summary_metrics),
                  files_in(dirs, {rundir::kSummary, rundir::kSteps, rundir::kEval})));
}

void add_compare_tables(const Loaded& in, Document& doc) {
  for (auto& t : compare_tables(*in.cmp_a, in.cmp_ma, *in.cmp_b, in.cmp_mb)) {
    t.source = compare_source(t.id, *in.cmp_a, *in.cmp_b);
    doc.tables.push_back(std::move(t));
  }
}

// How the statistics are made, the findings' thresholds and the comparison's method.
void add_footer(bool compared, Document& doc) {
  doc.footer.push_back(
      "Statistics leave out each run's warm-up steps (summary.json "
      "steps.warmup_excluded, else profile.warmup_steps); p10/p90 interpolate "
      "linearly. Unknown figures print n/a.");
  if (doc.findings_ran) {
    doc.footer.push_back(fmt::format(
        "Findings thresholds: data wait > {:.0f}% of step; eval > {:.0f}% of wall time; optimizer "
        "> {:.0f}% of step; attn.core > {:.0f}% of block time; MFU < {:.0f}% with batch <= {:.0f}; "
        "peak RSS < {:.0f}% of host memory; > {:.0f} minor faults or involuntary switches per "
        "step (medians); top op above the roofline > {:.0f}% of step; bf16/fp32 matmul peak > "
        "{}x on an fp32 run.",
        kDataWaitMaxShare * 100, kEvalMaxShare * 100, kOptimizerMaxShare * 100,
        kAttentionCoreMaxShare * 100, kLowMfu * 100, kSmallBatch, kMemoryHeadroomShare * 100,
        kMaxMinorFaultsPerStep, kRooflineLostMinShare * 100, kBf16MinPeakRatio));
  }
  if (compared) {
    for (auto& line : compare_method_notes()) doc.footer.push_back(std::move(line));
  }
}

}  // namespace

Document build_report(const ReportOptions& options) {
  check_options(options);
  Loaded in = load_report_inputs(options);
  Document doc;
  doc.title = "llmprof report";
  add_intro(options, in, doc);
  add_warnings(in, doc);
  add_summary_table(in, doc);
  if (in.cmp_a) add_compare_tables(in, doc);
  for (size_t i = 0; i < in.runs.size(); ++i) {
    add_run_sections(*in.runs[i], in.run_metrics[i], options.top_ops, doc);
  }
  for (const auto& s : in.sweeps) add_sweep_sections(s, doc);
  add_footer(in.cmp_a != nullptr, doc);
  return doc;
}

}  // namespace llmprof::report
