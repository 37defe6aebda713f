// The A/B statistics against hand-computed values: medians, paired ratios, Binom(n, 1/2), the
// order-statistic interval and the confidence it achieves, its coverage measured, and the verdict
// at and around no change.
#include "llmprof/ab/stats.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "llmprof/error.h"

namespace llmprof::ab {
namespace {

TEST(AbCompare, MediansAreTheMiddleValueOrMeanOfTheMiddleTwo) {
  const Comparison c = compare({4, 1, 3, 2}, {3, 1, 2, 5});
  EXPECT_DOUBLE_EQ(c.baseline_median, 2.5);   // 1 2 3 4: (2 + 3) / 2
  EXPECT_DOUBLE_EQ(c.candidate_median, 2.5);  // 1 2 3 5: (2 + 3) / 2
  // Ratios 0.75, 1, 2/3, 2.5; sorted 2/3 0.75 1 2.5: (0.75 + 1) / 2.
  EXPECT_DOUBLE_EQ(c.median_paired_ratio, 0.875);
}

TEST(AbPairedRatios, CandidateOverBaselinePerRound) {
  const std::vector<double> r = paired_ratios({10, 20}, {5, 30});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 1.5);
  EXPECT_THROW(paired_ratios({1, 2}, {1}), std::invalid_argument);
}

// Binom(n, 1/2) by hand: P(B <= k) = sum_{i <= k} C(n, i) / 2^n.
TEST(AbBinomial, HalfCdfIsTheHandComputedSum) {
  EXPECT_DOUBLE_EQ(binomial_half_cdf(6, 0), 1.0 / 64);
  EXPECT_DOUBLE_EQ(binomial_half_cdf(6, 1), 7.0 / 64);
  EXPECT_DOUBLE_EQ(binomial_half_cdf(10, 2), 56.0 / 1024);  // 1 + 10 + 45
  EXPECT_DOUBLE_EQ(binomial_half_cdf(3, 1), 0.5);
  EXPECT_DOUBLE_EQ(binomial_half_cdf(5, -1), 0);
  EXPECT_DOUBLE_EQ(binomial_half_cdf(5, 5), 1);
  EXPECT_NEAR(binomial_half_cdf(1000, 500), 0.5 + 0.5 * 0.0252250181783608, 1e-12);  // C/2^n/2
  EXPECT_THROW(binomial_half_cdf(1001, 3), std::invalid_argument);
}

TEST(AbSignTest, AllPairsAboveGiveTwoToTheMinusN) {
  EXPECT_DOUBLE_EQ(sign_test_p(6, 6), 1.0 / 64);  // never 0
  EXPECT_DOUBLE_EQ(sign_test_p(6, 5), 7.0 / 64);  // C(6,5) + C(6,6)
  EXPECT_DOUBLE_EQ(sign_test_p(6, 0), 1);
  EXPECT_DOUBLE_EQ(sign_test_p(7, 7), 1.0 / 128);
}

// 1 - 2 / 2^n >= 0.95 first at n = 6 (5 pairs: 0.9375); 2^-n <= 0.025 first at 6, <= 0.0125 at 7.
TEST(AbMinPairs, SixForNinetyFivePercent) {
  EXPECT_EQ(min_pairs(0.95), 6);
  EXPECT_EQ(min_pairs(kConfidence), kMinRepetitions);
  EXPECT_EQ(min_pairs(0.99), 8);  // 1 - 2/128 = 0.984 < 0.99 <= 1 - 2/256
  EXPECT_EQ(min_pairs_one_sided(0.025), 6);
  EXPECT_EQ(min_pairs_one_sided(0.0125), 7);
}

// Six pairs: only k = 1 reaches 95% (1 - 2/64 = 96.875%; k = 2 gives 1 - 14/64 = 78%): the
// interval is the smallest and the largest ratio.
TEST(AbInterval, SixPairsSpanTheExtremeRatiosAt96_9Percent) {
  const auto ci = median_ratio_interval({10, 10, 10, 10, 10, 10}, {9, 12, 10.5, 11, 8, 10});
  ASSERT_TRUE(ci.has_value());
  EXPECT_DOUBLE_EQ(ci->low, 0.8);
  EXPECT_DOUBLE_EQ(ci->high, 1.2);
  EXPECT_DOUBLE_EQ(ci->confidence, 62.0 / 64);
  EXPECT_EQ(verdict_of(*ci), Verdict::kInconclusive);
}

// Ten pairs: k = 2 gives 1 - 2 * 11/1024 = 97.85%, k = 3 only 1 - 2 * 56/1024 = 89%: the 2nd and
// the 9th of the sorted ratios.
TEST(AbInterval, TenPairsTakeTheSecondFromEachEnd) {
  const std::vector<double> b(10, 10.0);
  const std::vector<double> c{13, 5, 11, 12, 9, 14, 10, 6, 15, 7};  // ratios 0.5 .. 1.5
  const auto ci = median_ratio_interval(b, c);
  ASSERT_TRUE(ci.has_value());
  EXPECT_DOUBLE_EQ(ci->low, 0.6);
  EXPECT_DOUBLE_EQ(ci->high, 1.4);
  EXPECT_DOUBLE_EQ(ci->confidence, 1 - 22.0 / 1024);
}

// Five pairs reach 93.75% at best: no 95% interval, whatever the ratios.
TEST(AbInterval, FivePairsHaveNone) {
  EXPECT_FALSE(median_ratio_interval({10, 10, 10, 10, 10}, {5, 5, 5, 5, 5}).has_value());
  EXPECT_TRUE(median_ratio_interval({10, 10, 10, 10, 10}, {5, 5, 5, 5, 5}, 0.9).has_value());
}

// The coverage the interval claims, measured: 4000 seeded draws of 6 pairs with a true median
// ratio of 1 (round noise shared by the pair, lognormal own noise, a heavy tail in a tenth of the
// rounds). Distribution-free, it must cover 1 in about 96.9% of draws (within 4 standard errors,
// 0.011); the percentile bootstrap it replaced covered about 80% at 3 pairs.
TEST(AbInterval, CoverageHoldsAtSixPairs) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> round_noise(0, 0.3), own(0, 0.05), tail(0, 0.5);
  std::uniform_real_distribution<double> u(0, 1);
  int covered = 0;
  const int draws = 4000;
  for (int d = 0; d < draws; ++d) {
    std::vector<double> b, c;
    for (int i = 0; i < 6; ++i) {
      const double base = 10 * round_noise(rng);
      const double spike = u(rng) < 0.1 ? tail(rng) : 1.0;  // either arm's, by turns
      b.push_back(base * own(rng) * (i % 2 ? spike : 1.0));
      c.push_back(base * own(rng) * (i % 2 ? 1.0 : spike));
    }
    const auto ci = median_ratio_interval(b, c);
    covered += ci && ci->low <= 1 && 1 <= ci->high;
  }
  EXPECT_NEAR(static_cast<double>(covered) / draws, 62.0 / 64, 0.011);
}

TEST(AbInterval, RejectsTimesThatAreNotPositive) {
  EXPECT_THROW(median_ratio_interval({10, 0}, {8, 9}), DataError);
  EXPECT_THROW(median_ratio_interval({10, 10}, {8, -1}), DataError);
  EXPECT_THROW(median_ratio_interval({}, {}), std::invalid_argument);
  EXPECT_THROW(median_ratio_interval({1, 2}, {1}), std::invalid_argument);
}

TEST(AbVerdict, NoChangeInsideTheIntervalIsInconclusive) {
  EXPECT_EQ(verdict_of({0.5, 0.9}), Verdict::kFaster);
  EXPECT_EQ(verdict_of({1.1, 2.0}), Verdict::kSlower);
  EXPECT_EQ(verdict_of({0.9, 1.1}), Verdict::kInconclusive);
  EXPECT_EQ(verdict_of({0.9, 1.0}), Verdict::kInconclusive);  // 1 itself is no change
  EXPECT_EQ(verdict_of({1.0, 1.2}), Verdict::kInconclusive);
}

TEST(AbVerdict, NamesRoundTrip) {
  for (Verdict v : {Verdict::kFaster, Verdict::kSlower, Verdict::kInconclusive}) {
    EXPECT_EQ(parse_verdict(verdict_name(v)), v);
  }
  EXPECT_EQ(verdict_name(Verdict::kSlower), "slower");
  EXPECT_FALSE(parse_verdict("better").has_value());
}

// Six rounds, the candidate 0.7 of the baseline in each: every ratio, and so the interval, is 0.7.
TEST(AbCompare, ConstantRatioIsFasterWithAPointInterval) {
  const Comparison c = compare({10, 12, 11, 10, 12, 11}, {7, 8.4, 7.7, 7, 8.4, 7.7});
  EXPECT_EQ(c.pairs, 6);
  EXPECT_DOUBLE_EQ(c.baseline_median, 11);
  EXPECT_DOUBLE_EQ(c.candidate_median, 7.7);
  EXPECT_DOUBLE_EQ(c.ratio_of_medians, 0.7);
  EXPECT_DOUBLE_EQ(c.median_paired_ratio, 0.7);
  ASSERT_TRUE(c.interval.has_value());
  EXPECT_NEAR(c.interval->low, 0.7, 1e-12);
  EXPECT_NEAR(c.interval->high, 0.7, 1e-12);
  EXPECT_DOUBLE_EQ(c.confidence, 62.0 / 64);  // achieved, not the 95% asked for
  EXPECT_EQ(c.verdict, Verdict::kFaster);
}

TEST(AbCompare, FewerThanSixPairsHaveNoIntervalAndNoVerdict) {
  const Comparison c = compare({10}, {5});
  EXPECT_DOUBLE_EQ(c.ratio_of_medians, 0.5);
  EXPECT_FALSE(c.interval.has_value());
  EXPECT_EQ(c.verdict, Verdict::kInconclusive);
  // Five pairs all twice as fast: 1 - 2/32 = 93.75% at best, still no 95% verdict.
  EXPECT_EQ(compare({10, 10, 10, 10, 10}, {5, 5, 5, 5, 5}).verdict, Verdict::kInconclusive);
}

}  // namespace
}  // namespace llmprof::ab
