// Honest summary statistics (google/benchmark statistics.cc), the one implementation that the run
// summary, the benchmarks and the report share: n, mean, median, percentiles, sample stddev, cv,
// min, max. Percentiles interpolate linearly between order statistics (numpy's default). The one
// median too: every concern's median (dist's communication figures, the report's, ab's) is
// median() below, which summarize() agrees with bit for bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace llmprof {

struct Summary {
  int64_t n = 0;
  double mean = 0, median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
  std::optional<double> stddev;  // sample stddev; only when n >= 2
  std::optional<double> cv;      // stddev / mean; only when n >= 2 and mean != 0
};

// The q-quantile (0..1) of sorted values, linear interpolation. Empty: 0.
inline double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// The median of values: the middle one, or for an even count the mean of the middle two,
// computed as quantile_sorted(sorted, 0.5) does (lo + (hi - lo) * 0.5), so that it equals
// summarize(values).median exactly. Empty: nullopt.
inline std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

// Summary of values; n == 0 gives an all-zero Summary with n = 0 (callers print it as null).
inline Summary summarize(std::vector<double> values) {
  Summary s;
  s.n = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  s.median = quantile_sorted(values, 0.5);
  s.p10 = quantile_sorted(values, 0.1);
  s.p90 = quantile_sorted(values, 0.9);
  s.min = values.front();
  s.max = values.back();
  if (s.n >= 2) {
    double ss = 0;
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(s.n - 1));
    if (s.mean != 0) s.cv = *s.stddev / s.mean;
  }
  return s;
}

}  // namespace llmprof
