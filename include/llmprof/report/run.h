// A run directory read back for reports and plots: the resolved config, host context, per-step
// rows, evals and whatever later profiling files are present (modules, ops, memory, activations).
// Files that are absent leave their fields empty; a malformed file throws DataError naming the
// file and line (exit 2). What a killed run or a full disk cut short (the last row of a CSV file,
// an empty file) is left out with a warning and the run marked incomplete. Unknown values (empty
// CSV fields, JSON null) stay nullopt, never 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/report/warning.h"

namespace llmprof::report {

// A CSV file of numbers, by column: values[c][r] is row r of column names[c]; empty = nullopt.
struct NumericTable {
  std::vector<std::string> names;
  std::vector<std::vector<std::optional<double>>> values;
  size_t num_rows() const { return values.empty() ? 0 : values.front().size(); }
  // The column called name, or nullptr when the file has no such column.
  const std::vector<std::optional<double>>* column(const std::string& name) const;
  // The present values of a column from row `from` on (absent column: empty).
  std::vector<double> present(const std::string& name, size_t from = 0) const;
};

// One eval.csv row: the loss of one split at one step.
struct EvalRow {
  int64_t step = 0;
  std::string split;  // train | val
  double loss = 0;
  std::optional<double> perplexity;
  std::optional<double> eval_ms;
};

// One modules.csv row: one scope of one block in one pass, per step (averaged over steps).
struct ModuleRow {
  std::string scope;             // embedding, block, attn, attn.core, mlp.up, ...
  std::optional<int64_t> block;  // layer index; nullopt for scopes outside the blocks
  std::string pass;              // forward | backward
  std::optional<double> calls, total_ms, mean_ms, self_ms, share_of_pass, flops, mfu;
};

// One ops.csv row: one ATen op, per step.
struct OpRow {
  std::string op;
  std::optional<double> calls, self_ms, total_ms, self_share, flops, gflops_per_s, alloc_bytes;
  std::string input_shapes;
};

// One memory.csv row: allocator and RSS figures of one phase of one step.
struct MemoryRow {
  int64_t step = 0;
  std::string phase;
  std::optional<double> peak_allocated_bytes, end_allocated_bytes, rss_bytes;
};

// One activations.csv row: bytes saved for backward by one scope of one block.
struct ActivationRow {
  std::string scope;
  std::optional<int64_t> block;
  std::optional<double> saved_bytes;
};

// summary.json "energy": measured or estimated energy of the run.
struct EnergySummary {
  std::optional<double> total_j, kwh, tokens_per_j, flops_per_j, mean_power_w, peak_power_w, co2_g;
  std::string source;
  bool estimated = false;
};

// Everything a report or plot needs from one run directory.
struct Run {
  std::string dir;          // as given
  std::string label;        // short name for tables and legends (the directory's name)
  std::string status;       // summary.json status, or "incomplete" without summary.json
  bool incomplete = false;  // no summary.json, or a file cut short (see warnings)
  std::string message;      // summary.json message (why a run stopped), may be empty
  std::vector<InputWarning> warnings;  // rows and files left out because they were cut short

  std::map<std::string, std::string> config;     // config.yaml flattened: "train.batch_size" -> "4"
  std::optional<double> host_memory_bytes;       // env.json host.memory_bytes
  std::optional<double> host_cores;              // env.json host.cores
  std::optional<double> peak_flops_per_s;        // env.json peak_flops.flops_per_s
  std::optional<int64_t> summary_warmup_steps;   // summary.json steps.warmup_excluded
  std::optional<int64_t> summary_max_steps;      // summary.json steps.max_steps
  std::optional<double> summary_peak_rss_bytes;  // summary.json memory.peak_rss_bytes
  std::optional<EnergySummary> energy;           // summary.json energy, when present

  NumericTable steps;  // steps.csv
  std::vector<EvalRow> evals;
  std::vector<ModuleRow> modules;
  std::vector<OpRow> ops;
  std::vector<MemoryRow> memory;
  std::vector<ActivationRow> activations;

  // A config value as a number, or nullopt when absent or not numeric.
  std::optional<double> config_number(const std::string& key) const;
};

// Reads a run directory. Throws DataError (exit 2) for a missing directory, a directory without
// steps.csv (or an empty one), or a malformed file (naming the file and line); parts cut short
// are left out into Run::warnings.
Run load_run(const std::string& dir);

// Gives runs that share a directory name a "parent/name" label so tables and legends tell them
// apart.
void disambiguate_labels(const std::vector<Run*>& runs);

// True when dir holds a sweep (sweep.csv) rather than a single run.
bool is_sweep_dir(const std::string& dir);

}  // namespace llmprof::report
