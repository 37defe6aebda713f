// The A/B statistics against hand-computed values: medians, paired ratios, the bootstrap interval
// where every possible draw is known, and the verdict at and around no change.
#include "llmprof/ab/stats.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "llmprof/error.h"

namespace llmprof::ab {
namespace {

TEST(AbMedian, MiddleValueOrMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(AbPairedRatios, CandidateOverBaselinePerRound) {
  const std::vector<double> r = paired_ratios({10, 20}, {5, 30});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 1.5);
  EXPECT_THROW(paired_ratios({1, 2}, {1}), std::invalid_argument);
}

// Two pairs (10, 8) and (10, 12): a draw of two pair indices gives median(candidate*) 8, 10 or 12
// with probability 1/4, 1/2, 1/4, and median(baseline*) always 10. So about 500 of the 2000 ratios
// are 0.8 and 500 are 1.2: the 2.5% and 97.5% quantiles are exactly 0.8 and 1.2.
TEST(AbBootstrap, TwoPairsGiveTheExtremeDraws) {
  const Interval ci = bootstrap_ratio_interval({10, 10}, {8, 12});
  EXPECT_DOUBLE_EQ(ci.low, 0.8);
  EXPECT_DOUBLE_EQ(ci.high, 1.2);
  EXPECT_EQ(verdict_of(ci), Verdict::kInconclusive);
}

// Candidate = baseline + 5 in every round: the median of three drawn pairs is one of the pairs, so
// a draw's ratio is (m + 5) / m with m = 9, 10 or 11. m = 11 and m = 9 each come with probability
// 7/27 (two or three of the draws are that pair), far above 2.5%: the interval is
// [16/11, 14/9].
TEST(AbBootstrap, ShiftedCandidateGivesTheRatiosOfItsPairs) {
  const Interval ci = bootstrap_ratio_interval({10, 11, 9}, {15, 16, 14});
  EXPECT_DOUBLE_EQ(ci.low, 16.0 / 11);
  EXPECT_DOUBLE_EQ(ci.high, 14.0 / 9);
  EXPECT_EQ(verdict_of(ci), Verdict::kSlower);
}

TEST(AbBootstrap, SameSeedSameInterval) {
  const std::vector<double> a = {10.2, 9.7, 10.9, 10.1, 9.9}, b = {9.1, 9.8, 8.7, 9.4, 10.3};
  const Interval x = bootstrap_ratio_interval(a, b);
  const Interval y = bootstrap_ratio_interval(a, b);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  EXPECT_LE(x.low, x.high);
  EXPECT_GE(x.low, 8.7 / 10.9);  // no draw's ratio lies outside min(b)/max(a) .. max(b)/min(a)
  EXPECT_LE(x.high, 10.3 / 9.7);
}

TEST(AbBootstrap, RejectsTimesThatAreNotPositive) {
  EXPECT_THROW(bootstrap_ratio_interval({10, 0}, {8, 9}), DataError);
  EXPECT_THROW(bootstrap_ratio_interval({10, 10}, {8, -1}), DataError);
  EXPECT_THROW(bootstrap_ratio_interval({}, {}), std::invalid_argument);
  EXPECT_THROW(bootstrap_ratio_interval({1, 2}, {1}), std::invalid_argument);
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

// Three rounds, the candidate 0.7 of the baseline in each: every draw's ratio is 0.7.
TEST(AbCompare, ConstantRatioIsFasterWithAPointInterval) {
  const Comparison c = compare({10, 12, 11}, {7, 8.4, 7.7});
  EXPECT_EQ(c.pairs, 3);
  EXPECT_DOUBLE_EQ(c.baseline_median, 11);
  EXPECT_DOUBLE_EQ(c.candidate_median, 7.7);
  EXPECT_DOUBLE_EQ(c.ratio_of_medians, 0.7);
  EXPECT_DOUBLE_EQ(c.median_paired_ratio, 0.7);
  ASSERT_TRUE(c.interval.has_value());
  EXPECT_NEAR(c.interval->low, 0.7, 1e-12);
  EXPECT_NEAR(c.interval->high, 0.7, 1e-12);
  EXPECT_EQ(c.verdict, Verdict::kFaster);
}

TEST(AbCompare, OnePairHasNoIntervalAndNoVerdict) {
  const Comparison c = compare({10}, {5});
  EXPECT_DOUBLE_EQ(c.ratio_of_medians, 0.5);
  EXPECT_FALSE(c.interval.has_value());
  EXPECT_EQ(c.verdict, Verdict::kInconclusive);
}

}  // namespace
}  // namespace llmprof::ab
