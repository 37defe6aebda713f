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

}  // namespace
}  // namespace llmprof
