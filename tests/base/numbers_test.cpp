// whole_int64 / truncated_int64 (base): doubles from files into int64_t without undefined casts.
#include "llmprof/base/numbers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace llmprof {
namespace {

TEST(WholeInt64, TakesWholeNumbersInRange) {
  EXPECT_EQ(whole_int64(0.0), 0);
  EXPECT_EQ(whole_int64(-3.0), -3);
  EXPECT_EQ(whole_int64(9007199254740992.0), 9007199254740992);  // 2^53
  EXPECT_EQ(whole_int64(-9223372036854775808.0), std::numeric_limits<int64_t>::min());
}

TEST(WholeInt64, RefusesFractionsNonFiniteAndOutOfRange) {
  EXPECT_EQ(whole_int64(1.5), std::nullopt);
  EXPECT_EQ(whole_int64(9223372036854775808.0), std::nullopt);  // 2^63
  EXPECT_EQ(whole_int64(8.88889e57), std::nullopt);
  EXPECT_EQ(whole_int64(-1e300), std::nullopt);
  EXPECT_EQ(whole_int64(std::nan("")), std::nullopt);
  EXPECT_EQ(whole_int64(std::numeric_limits<double>::infinity()), std::nullopt);
}

TEST(TruncatedInt64, TruncatesTowardZeroWithinRange) {
  EXPECT_EQ(truncated_int64(2.9), 2);
  EXPECT_EQ(truncated_int64(-2.9), -2);
  EXPECT_EQ(truncated_int64(1e19), std::nullopt);
  EXPECT_EQ(truncated_int64(std::nan("")), std::nullopt);
}

}  // namespace
}  // namespace llmprof
