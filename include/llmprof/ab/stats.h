// The statistics of an A/B comparison of two arms, baseline and candidate, measured alternately:
// repetition i of each arm ran in the same round, so (baseline[i], candidate[i]) is a pair.
//
// The figure is a time (lower is better). The effect is the median of the paired ratios
//   r_i = candidate[i] / baseline[i]                 (r < 1: the candidate is faster)
// and its uncertainty the distribution-free order-statistic interval of that median (the sign
// test's interval; Hollander & Wolfe, Nonparametric Statistical Methods, 3.6): with the n ratios
// sorted r_(1) <= ... <= r_(n) (the same order as the log-ratios d_i = log r_i),
//   P(r_(k) <= median <= r_(n+1-k)) >= 1 - 2 P(Binom(n, 1/2) <= k - 1)
// for any distribution of the pairs, as long as they are independent. The rank k is the largest
// whose achieved confidence is at least kConfidence; the achieved one is reported. Five pairs
// reach 1 - 2/32 = 93.75% at best, six 1 - 2/64 = 96.9%: below kMinRepetitions there is no 95%
// interval. (The percentile bootstrap this replaced could only return observed ratios at 2 or 3
// pairs: its "95%" covered 50% to 75%.)
//
// Verdict: faster when the whole interval lies below 1, slower when it lies above, inconclusive
// when it spans 1 (no change is within the noise) or when there are too few pairs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::ab {

inline constexpr double kConfidence = 0.95;
// The fewest pairs whose order-statistic interval reaches kConfidence (min_pairs(kConfidence)):
// fewer pairs give no interval, and `check --ab` and `report --try` refuse them.
inline constexpr int64_t kMinRepetitions = 6;

enum class Verdict : int { kFaster = 0, kSlower = 1, kInconclusive = 2 };

}  // namespace llmprof::ab

namespace llmprof::config {
LLMPROF_ENUM_NAMES(ab::Verdict, "verdict", "faster", "slower", "inconclusive");
}  // namespace llmprof::config

namespace llmprof::ab {

// "faster" | "slower" | "inconclusive": the stable names written to files.
inline std::string_view verdict_name(Verdict v) {
  const std::string_view name = config::name(v);
  return name == "?" ? "inconclusive" : name;  // "?": a cast outside the table
}

// The verdict a name stands for; nullopt for any other text.
inline std::optional<Verdict> parse_verdict(std::string_view name) {
  return config::find_enum<Verdict>(name);
}

// A confidence interval of the median paired ratio, and the confidence it achieves.
struct Interval {
  double low = 0;
  double high = 0;
  double confidence = kConfidence;  // achieved: 1 - 2 P(Binom(n, 1/2) <= k - 1)
};

// What an A/B comparison found.
struct Comparison {
  int64_t pairs = 0;
  double baseline_median = 0;        // median of the baseline repetitions' figures
  double candidate_median = 0;       // median of the candidate repetitions' figures
  double ratio_of_medians = 0;       // candidate / baseline
  double median_paired_ratio = 0;    // median of candidate[i] / baseline[i]: the effect
  std::optional<Interval> interval;  // of median_paired_ratio; nullopt below kMinRepetitions
  double confidence = kConfidence;   // the interval's achieved confidence (kConfidence without)
  Verdict verdict = Verdict::kInconclusive;
};

// candidate[i] / baseline[i] for each pair. Throws std::invalid_argument on unequal lengths.
std::vector<double> paired_ratios(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate);

// P(Binom(n, 1/2) <= k), exactly (0 for k < 0, 1 for k >= n). Throws std::invalid_argument for
// n < 0 or n > 1000.
double binomial_half_cdf(int64_t n, int64_t k);

// The one-sided sign-test p-value of `above` of n pairs lying above a bound when the median lies
// at or below it: P(Binom(n, 1/2) >= above). Never 0: at least 2^-n.
double sign_test_p(int64_t n, int64_t above);

// The fewest pairs whose widest order-statistic interval (k = 1) reaches `confidence`:
// 1 - 2^(1-n) >= confidence (6 for 0.95).
int64_t min_pairs(double confidence);

// The fewest pairs whose one-sided sign test can reach level alpha: 2^-n <= alpha (6 for 0.025,
// 7 for 0.0125: Holm's first level in a family of two).
int64_t min_pairs_one_sided(double alpha);

// The order-statistic interval of the median of the paired ratios at the largest rank k whose
// achieved confidence is at least `confidence`; nullopt when n pairs cannot reach it (below
// min_pairs). Throws std::invalid_argument for unequal lengths or no pairs, DataError for a
// figure that is not a positive number (a time of 0 has no ratio).
std::optional<Interval> median_ratio_interval(const std::vector<double>& baseline,
                                              const std::vector<double>& candidate,
                                              double confidence = kConfidence);

// faster: high < 1; slower: low > 1; otherwise inconclusive.
Verdict verdict_of(const Interval& interval);

// Every figure above for the pairs (inconclusive below kMinRepetitions pairs). Throws as
// median_ratio_interval does.
Comparison compare(const std::vector<double>& baseline, const std::vector<double>& candidate);

}  // namespace llmprof::ab
