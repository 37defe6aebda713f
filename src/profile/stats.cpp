#include "llmprof/profile/stats.h"

#include <algorithm>
#include <cmath>

namespace llmprof::profile {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::vector<double> values) {
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

}  // namespace llmprof::profile
