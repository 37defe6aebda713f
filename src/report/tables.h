// Builders of the report's tables, one family per file: run tables (tables_run.cpp), sweep tables
// (tables_sweep.cpp). Private to src/report.
#pragma once

#include <optional>
#include <vector>

#include "llmprof/report/document.h"
#include "llmprof/report/metrics.h"
#include "llmprof/report/run.h"
#include "llmprof/report/sweep.h"

namespace llmprof::report::detail {

// One row per run: status, steps, step time, tokens/s, MFU, losses, peak RSS, energy.
Table summary_table(const std::vector<const Run*>& runs, const std::vector<RunMetrics>& metrics);

// Phases of the step (median, p10, p90, share of the median step) and eval's share of wall time.
Table phase_table(const Run& run, const RunMetrics& m);

// modules.csv by scope, forward and backward, summed over blocks; nullopt without modules.csv.
std::optional<Table> module_table(const Run& run, const RunMetrics& m);

// The top_n ops of ops.csv by self time; nullopt without ops.csv.
std::optional<Table> ops_table(const Run& run, size_t top_n);

// Ops (ops.csv) and modules (modules.csv, summed over blocks) ranked by the time they spend
// above the roofline (lost_ms), top_n rows; nullopt without roofline columns or both roofs.
std::optional<Table> roofline_ops_table(const Run& run, size_t top_n);
std::optional<Table> roofline_modules_table(const Run& run, size_t top_n);

// memory.csv by phase, plus peak RSS against host memory; nullopt without memory figures.
std::optional<Table> memory_table(const Run& run, const RunMetrics& m);
// summary.json plan: llmprof plan's prediction beside the run's measurement, per component.
std::optional<Table> plan_table(const Run& run);

// summary.json model.gqa (llama): grouped-query attention's KV-cache bytes and attention FLOPs per
// token against a multi-head model of the same width; nullopt without it.
std::optional<Table> gqa_table(const Run& run);

// activations.csv by scope, summed over blocks; nullopt without it.
std::optional<Table> activations_table(const Run& run);

// A data-parallel run's Communication section (tables_comm.cpp): the per-rank temporal breakdown,
// the all-reduce per bucket, and who launches last; nullopt without comm_steps.csv /
// collectives.csv.
std::optional<Table> comm_breakdown_table(const Run& run);
std::optional<Table> comm_bucket_table(const Run& run);
std::optional<Table> comm_straggler_table(const Run& run);
// A data-parallel run's ranks, each with its own figures (summary.json distributed.ranks), the
// straggler first, beside the run's global ones.
std::optional<Table> rank_figures_table(const Run& run);

// Every point of a sweep, repeats aggregated: keys, status, metrics.
Table sweep_points_table(const Sweep& sweep, const std::vector<SweepConfig>& configs);

// Pivot of a metric over the first two swept keys (one key: a single column).
Table sweep_pivot_table(const Sweep& sweep,
                        const std::vector<SweepConfig>& configs,
                        const std::string& metric);

// The best configuration for each metric (lowest loss, highest tokens/s, ...).
Table sweep_best_table(const Sweep& sweep, const std::vector<SweepConfig>& configs);

// The Pareto front of val loss vs tokens/s (and energy where every point measured it).
Table sweep_pareto_table(const Sweep& sweep, const std::vector<SweepConfig>& configs);

}  // namespace llmprof::report::detail
