// Figures derived from a run for reports, comparisons, findings and plots: per-step statistics
// after warm-up (from steps.csv, so complete and incomplete runs are treated alike), eval share,
// final losses, module totals aggregated over blocks, memory per phase.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/base/stats.h"
#include "llmprof/report/run.h"

namespace llmprof::report {

// Statistics of per-step values: the run summary's own (llmprof/base/stats.h).
using Stats = llmprof::Summary;

// Stats of values; n == 0 when empty (callers print it as unknown).
Stats stats_of(std::vector<double> values);

// The phases of a step, in order, as steps.csv names them without the _ms suffix.
const std::vector<std::string>& phase_names();

// One scope aggregated over blocks in one pass (sums of per-step figures).
struct ScopeTotal {
  double total_ms = 0;
  std::optional<double> share_of_pass;  // sum of modules.csv share_of_pass, when every row has it
  double calls = 0;
  std::optional<double> flops;
  std::optional<double> mfu;  // time-weighted mean of the rows' mfu
  int64_t rows = 0;
};

// Memory of one phase over the recorded steps.
struct PhaseMemory {
  std::optional<double> peak_allocated_bytes;  // max over steps
  std::optional<double> end_allocated_bytes;   // median over steps
  std::optional<double> rss_bytes;             // max over steps
};

struct RunMetrics {
  int64_t steps_completed = 0;        // rows in steps.csv
  int64_t warmup_excluded = 0;        // leading rows left out of the statistics
  std::map<std::string, Stats> step;  // steps.csv column -> stats after warm-up ("step_ms", ...)
  double step_total_ms = 0;           // sum of step_ms over all rows
  double eval_total_ms = 0;           // sum of eval_ms over all rows
  std::optional<double> eval_share;   // eval / (steps + evals), when any eval ran
  std::optional<double> final_train_loss, final_val_loss, final_val_perplexity;
  bool train_loss_from_eval = false;     // final_train_loss is an eval loss (else a step loss)
  std::optional<double> peak_rss_bytes;  // max of max_rss_bytes, else summary.json
  std::optional<double> energy_j;        // summary.json energy.total_j, else sum of energy_j
  bool energy_estimated = false;
  std::map<std::string, ScopeTotal> forward_scopes, backward_scopes;  // modules.csv by scope
  std::map<std::string, PhaseMemory> memory;                          // memory.csv by phase
  std::vector<std::string> memory_phases;                             // in first-seen order

  // Stats of a steps.csv column, or nullptr when the column is absent or has no values.
  const Stats* stat(const std::string& column) const;
  // Median of a phase as a fraction of the median step; nullopt when unknown.
  std::optional<double> phase_share(const std::string& phase) const;
};

// Derives the metrics of a run. Warm-up is summary.json's steps.warmup_excluded, else the
// config's profile.warmup_steps, else 0; all rows are kept when warm-up would leave none.
RunMetrics compute_metrics(const Run& run);

// The canonical scope order of modules.csv (embedding, block, ln_1, attn, ... loss).
const std::vector<std::string>& scope_order();

}  // namespace llmprof::report
