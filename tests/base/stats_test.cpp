// summarize() and quantile_sorted() (base/stats.h): the one set of summary statistics, for the run
// summary, bench and report, against hand-computed values.
#include "llmprof/base/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace llmprof {
namespace {

TEST(Summarize, MatchesHandComputedStatistics) {
  Summary s = summarize({4, 1, 3, 2, 5});
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p10, 1.4);  // 1 + 0.4 * (2 - 1)
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_DOUBLE_EQ(*s.stddev, std::sqrt(2.5));
  Summary one = summarize({7});
  EXPECT_FALSE(one.stddev.has_value()) << "no spread from one value";
  EXPECT_EQ(summarize({}).n, 0);
}

TEST(Median, MiddleValueOrMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(*median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(*median({4, 1, 3, 2}), 2.5);  // (2 + 3) / 2
  EXPECT_DOUBLE_EQ(*median({7}), 7);
  EXPECT_FALSE(median({}).has_value()) << "no median of nothing";
}

// The median and summarize()'s are one definition, to the bit: an even count's lo + (hi - lo) / 2
// rounds differently from (lo + hi) / 2 for some pairs, and both must take the same one.
TEST(Median, EqualsTheSummaryMedianBitForBit) {
  const std::vector<std::vector<double>> cases = {
      {0.1, 0.7}, {1.0, 1.0 + 3 * 2.220446049250313e-16}, {1e-300, 3e-300}, {5, -2, 9.25, 0.3}};
  for (const auto& v : cases) {
    EXPECT_EQ(*median(v), summarize(v).median) << "values " << v.front() << ", " << v.back();
  }
}

}  // namespace
}  // namespace llmprof
