// A sweep directory read back: sweep.csv (one row per point and repeat; the swept keys are the
// columns before `repeat`), repeats aggregated into configurations, best points and the Pareto
// front. Point runs live under <sweep>/runs/<point_id>/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::report {

// One sweep.csv row.
struct SweepPoint {
  std::vector<std::string> key_values;  // parallel to Sweep::keys, as written
  int64_t repeat = 0;
  std::string point_id;
  std::string status;
  std::optional<double> exit_code;
  std::map<std::string, std::optional<double>> metrics;  // sweep_metric_names() -> value
  std::string run_dir;  // resolved point run directory; empty when it does not exist
};

// One configuration: the points sharing key values, metrics as medians over the repeats that
// completed (a failed or diverged repeat's figures are not comparable).
struct SweepConfig {
  std::vector<std::string> key_values;
  std::vector<size_t> points;  // indices into Sweep::points
  int64_t completed = 0;       // repeats with status completed (or ok)
  std::string status;          // "completed", or counts such as "2 completed, 1 failed"
  std::string label;           // "batch_size=8, lr=0.001"
  std::map<std::string, std::optional<double>> metrics;
};

struct Sweep {
  std::string dir;
  std::string label;
  std::vector<std::string> keys;  // swept keys, dotted ("train.batch_size")
  std::vector<SweepPoint> points;
  bool energy_estimated = false;  // sweep.csv energy_estimated: some energy is a TDP estimate
};

// The metric columns of sweep.csv, in table order (median_step_ms and final_train_loss,
// final_val_loss, final_val_perplexity are read as step_ms, train_loss, val_loss, val_perplexity).
const std::vector<std::string>& sweep_metric_names();

// True for metrics where more is better (tokens_per_s, mfu).
bool higher_is_better(const std::string& metric);

// Reads a sweep directory. Throws DataError for a missing directory or malformed sweep.csv
// (naming the file and line); sweep.json is checked for validity when present.
Sweep load_sweep(const std::string& dir);

// Groups points by key values (first-seen order); each metric is the median over repeats.
std::vector<SweepConfig> aggregate_sweep(const Sweep& sweep);

// Indices of configs on the Pareto front: lower val_loss, higher tokens_per_s and, when
// with_energy, lower energy_j. Configs missing a metric are left out. Sorted by tokens/s.
std::vector<size_t> pareto_front(const std::vector<SweepConfig>& configs, bool with_energy);

// Distinct values of swept key k in the configs, numerically sorted when all are numbers.
std::vector<std::string> key_levels(const std::vector<SweepConfig>& configs, size_t k);

// A short display name for each key: the last dotted part unless two keys share it.
std::vector<std::string> short_key_names(const std::vector<std::string>& keys);

}  // namespace llmprof::report
