// Honest summary statistics (google/benchmark statistics.cc): n, mean, median, percentiles,
// sample stddev, cv, min, max. Percentiles interpolate linearly between order statistics.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace llmprof::profile {

struct Summary {
  int64_t n = 0;
  double mean = 0, median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
  std::optional<double> stddev;  // sample stddev; only when n >= 2
  std::optional<double> cv;      // stddev / mean; only when n >= 2 and mean != 0
};

// Summary of values; n == 0 gives an all-zero Summary with n = 0 (callers print it as null).
Summary summarize(std::vector<double> values);

// The q-quantile (0..1) of sorted values, linear interpolation (numpy's default). Empty: 0.
double quantile_sorted(const std::vector<double>& sorted, double q);

}  // namespace llmprof::profile
