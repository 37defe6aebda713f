// The per-run CSV files of the run directory: steps.csv and eval.csv, appended and flushed row by
// row, and summary.json, written whole at the end (tmp + rename).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llmprof/output/csv.h"
#include "llmprof/profile/phase.h"
#include "llmprof/telemetry/rusage.h"

namespace llmprof::train {

inline constexpr int kSummarySchemaVersion = 1;

// Everything the loop knows about one finished step, copied out of the timed region.
struct StepRow {
  profile::StepRecord timing;
  double loss = 0;
  double lr = 0;
  double grad_norm = 0;          // pre-clip global norm; NaN when clipping is off
  int64_t tokens = 0;
  double flops = 0;              // analytic, per step
  double peak_flops_per_s = 0;
  std::optional<double> eval_ms;  // when this step ran an eval
  telemetry::RusageSnapshot rusage;  // deltas over the step
  bool phases_timed = false;
  std::optional<double> energy_j;     // null: no sensor and no estimate, or not covered
  std::optional<double> avg_power_w;
  bool energy_estimated = false;
};

class StepsCsv {
 public:
  explicit StepsCsv(const std::string& path);
  void write(const StepRow& row);

 private:
  output::CsvWriter csv_;
};

class EvalCsv {
 public:
  explicit EvalCsv(const std::string& path);
  // perplexity = exp(loss); accuracy is null for lm and mlm.
  void write(int64_t step, const std::string& split, double loss, std::optional<double> accuracy,
             double eval_ms);

 private:
  output::CsvWriter csv_;
};

// step_ms of a row, from its ticks.
inline double step_ms(const StepRow& r) {
  return static_cast<double>(r.timing.end_ns - r.timing.start_ns) * 1e-6;
}

}  // namespace llmprof::train
