#include "llmprof/ab/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "llmprof/base/stats.h"
#include "llmprof/error.h"

namespace llmprof::ab {

namespace {

void check_pairs(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  if (baseline.size() != candidate.size()) {
    throw std::invalid_argument(fmt::format("[ab] {} baseline figures against {} candidate ones",
                                            baseline.size(), candidate.size()));
  }
  if (baseline.empty()) throw std::invalid_argument("[ab] no pairs to compare");
  for (const auto* arm : {&baseline, &candidate}) {
    for (double v : *arm) {
      if (!std::isfinite(v) || v <= 0) {
        throw DataError(fmt::format("A/B: a {} repetition measured {}: a time must be positive",
                                    arm == &baseline ? "baseline" : "candidate", v));
      }
    }
  }
}

}  // namespace

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

std::vector<double> paired_ratios(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate) {
  if (baseline.size() != candidate.size()) {
    throw std::invalid_argument(fmt::format("[ab] {} baseline figures against {} candidate ones",
                                            baseline.size(), candidate.size()));
  }
  std::vector<double> out;
  for (size_t i = 0; i < baseline.size(); ++i) out.push_back(candidate[i] / baseline[i]);
  return out;
}

std::vector<double> bootstrap_ratios(const std::vector<double>& baseline,
                                     const std::vector<double>& candidate,
                                     int64_t resamples,
                                     uint64_t seed) {
  check_pairs(baseline, candidate);
  if (resamples < 1) throw std::invalid_argument("[ab] bootstrap needs at least one resample");
  const size_t n = baseline.size();
  std::mt19937_64 rng(seed);
  std::vector<double> ratios, drawn_a(n), drawn_b(n);
  ratios.reserve(static_cast<size_t>(resamples));
  for (int64_t r = 0; r < resamples; ++r) {
    for (size_t k = 0; k < n; ++k) {
      // A plain modulo, not std::uniform_int_distribution (whose algorithm each standard library
      // chooses): the bias is below n / 2^64, and the draw is the same everywhere.
      const size_t i = static_cast<size_t>(rng() % n);
      drawn_a[k] = baseline[i];
      drawn_b[k] = candidate[i];
    }
    ratios.push_back(median(drawn_b) / median(drawn_a));
  }
  std::sort(ratios.begin(), ratios.end());
  return ratios;
}

Interval bootstrap_ratio_interval(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate,
                                  double confidence,
                                  int64_t resamples,
                                  uint64_t seed) {
  const std::vector<double> ratios = bootstrap_ratios(baseline, candidate, resamples, seed);
  const double tail = (1 - confidence) / 2;
  return {quantile_sorted(ratios, tail), quantile_sorted(ratios, 1 - tail)};
}

Verdict verdict_of(const Interval& interval) {
  if (interval.high < 1) return Verdict::kFaster;
  if (interval.low > 1) return Verdict::kSlower;
  return Verdict::kInconclusive;
}

Comparison compare(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  check_pairs(baseline, candidate);
  Comparison c;
  c.pairs = static_cast<int64_t>(baseline.size());
  c.baseline_median = median(baseline);
  c.candidate_median = median(candidate);
  c.ratio_of_medians = c.candidate_median / c.baseline_median;
  c.median_paired_ratio = median(paired_ratios(baseline, candidate));
  if (c.pairs >= kMinRepetitions) {
    c.interval = bootstrap_ratio_interval(baseline, candidate);
    c.verdict = verdict_of(*c.interval);
  }
  return c;
}

}  // namespace llmprof::ab
