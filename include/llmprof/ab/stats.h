// The statistics of an A/B comparison of two arms, baseline and candidate, measured alternately:
// repetition i of each arm ran in the same round, so (baseline[i], candidate[i]) is a pair.
//
// The figure is a time (lower is better). The effect is the ratio of medians
//   r = median(candidate) / median(baseline)        (r < 1: the candidate is faster)
// and its uncertainty a percentile bootstrap over the pairs: draw n pair indices with replacement,
// take median(candidate*) / median(baseline*) of the drawn pairs, repeat kBootstrapResamples times;
// the confidence interval is the (1 - c)/2 and (1 + c)/2 quantiles of those ratios. Resampling
// whole pairs keeps what the rounds share (a machine slower for a while) inside each draw. The
// generator is std::mt19937_64 with a fixed seed, whose sequence the standard fixes: the same
// repetitions give the same interval on every machine.
//
// Verdict: faster when the whole interval lies below 1, slower when it lies above, inconclusive
// when it spans 1 (no change is within the noise) or when there are fewer than 2 pairs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::ab {

inline constexpr int64_t kBootstrapResamples = 2000;
inline constexpr uint64_t kBootstrapSeed = 20261127;
inline constexpr double kConfidence = 0.95;
inline constexpr int64_t kMinRepetitions = 2;  // fewer pairs: no interval, inconclusive

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

// A bootstrap confidence interval of the ratio of medians.
struct Interval {
  double low = 0;
  double high = 0;
};

// What an A/B comparison found.
struct Comparison {
  int64_t pairs = 0;
  double baseline_median = 0;        // median of the baseline repetitions' figures
  double candidate_median = 0;       // median of the candidate repetitions' figures
  double ratio_of_medians = 0;       // candidate / baseline
  double median_paired_ratio = 0;    // median of candidate[i] / baseline[i]
  std::optional<Interval> interval;  // of ratio_of_medians; nullopt below kMinRepetitions pairs
  double confidence = kConfidence;
  Verdict verdict = Verdict::kInconclusive;
};

// Median of values (linear interpolation between the middle two); 0 when empty.
double median(std::vector<double> values);

// candidate[i] / baseline[i] for each pair. Throws std::invalid_argument on unequal lengths.
std::vector<double> paired_ratios(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate);

// The percentile bootstrap interval of median(candidate) / median(baseline) over the pairs.
// Throws std::invalid_argument for unequal lengths, no pairs or resamples < 1, DataError for a
// figure that is not a positive number (a time of 0 has no ratio).
Interval bootstrap_ratio_interval(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate,
                                  double confidence = kConfidence,
                                  int64_t resamples = kBootstrapResamples,
                                  uint64_t seed = kBootstrapSeed);

// The ratios median(candidate*) / median(baseline*) of `resamples` draws of the pairs with
// replacement, sorted ascending (the distribution bootstrap_ratio_interval takes quantiles of).
// Throws as bootstrap_ratio_interval does.
std::vector<double> bootstrap_ratios(const std::vector<double>& baseline,
                                     const std::vector<double>& candidate,
                                     int64_t resamples = kBootstrapResamples,
                                     uint64_t seed = kBootstrapSeed);

// faster: high < 1; slower: low > 1; otherwise inconclusive.
Verdict verdict_of(const Interval& interval);

// Every figure above for the pairs (inconclusive below kMinRepetitions pairs). Throws as
// bootstrap_ratio_interval does.
Comparison compare(const std::vector<double>& baseline, const std::vector<double>& candidate);

}  // namespace llmprof::ab
