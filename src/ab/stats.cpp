#include "llmprof/ab/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

double binomial_half_cdf(int64_t n, int64_t k) {
  if (n < 0 || n > 1000) {
    throw std::invalid_argument(fmt::format("[ab] binomial of {} trials: expected 0..1000", n));
  }
  if (k < 0) return 0;
  if (k >= n) return 1;
  // term_i = C(n, i) / 2^n, from term_0 = 2^-n (exact; normal down to n = 1022) upwards.
  double term = std::ldexp(1.0, static_cast<int>(-n)), sum = 0;
  for (int64_t i = 0; i <= k; ++i) {
    sum += term;
    term = term * static_cast<double>(n - i) / static_cast<double>(i + 1);
  }
  return std::min(sum, 1.0);
}

double sign_test_p(int64_t n, int64_t above) {
  return binomial_half_cdf(n, n - above);  // P(B >= above) = P(B <= n - above): symmetric
}

int64_t min_pairs(double confidence) {
  int64_t n = 1;
  while (n < 1000 && 1 - 2 * binomial_half_cdf(n, 0) < confidence) ++n;
  return n;
}

int64_t min_pairs_one_sided(double alpha) {
  int64_t n = 1;
  while (n < 1000 && binomial_half_cdf(n, 0) > alpha) ++n;
  return n;
}

std::optional<Interval> median_ratio_interval(const std::vector<double>& baseline,
                                              const std::vector<double>& candidate,
                                              double confidence) {
  check_pairs(baseline, candidate);
  std::vector<double> r = paired_ratios(baseline, candidate);
  std::sort(r.begin(), r.end());
  const auto n = static_cast<int64_t>(r.size());
  // The largest rank k (1-based) with 1 - 2 P(B <= k - 1) >= confidence; k <= n / 2 keeps
  // r_(k) <= r_(n+1-k).
  std::optional<Interval> best;
  for (int64_t k = 1; 2 * k <= n + 1; ++k) {
    const double achieved = 1 - 2 * binomial_half_cdf(n, k - 1);
    if (achieved < confidence) break;
    best = Interval{r[static_cast<size_t>(k - 1)], r[static_cast<size_t>(n - k)], achieved};
  }
  return best;
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
  // base's median (llmprof/base/stats.h); check_pairs refused an empty arm.
  c.baseline_median = *llmprof::median(baseline);
  c.candidate_median = *llmprof::median(candidate);
  c.ratio_of_medians = c.candidate_median / c.baseline_median;
  c.median_paired_ratio = *llmprof::median(paired_ratios(baseline, candidate));
  c.interval = median_ratio_interval(baseline, candidate);
  if (c.interval) {
    c.confidence = c.interval->confidence;
    c.verdict = verdict_of(*c.interval);
  }
  return c;
}

}  // namespace llmprof::ab
