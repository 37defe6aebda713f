// A sweep directory read back (rundir::load_sweep): repeats aggregated into configurations, best
// points and the Pareto front.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/report/run.h"

namespace llmprof::report {

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

// True for metrics where more is better (tokens_per_s, mfu).
bool higher_is_better(const std::string& metric);

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
