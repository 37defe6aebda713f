#include "llmprof/data/dataset.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "llmprof/error.h"

namespace llmprof::data {
namespace {

// 0, 1, ..., n - 1: each token is its own position, so windows are easy to check.
std::vector<int32_t> iota_tokens(int32_t n) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), 0);
  return t;
}

TEST(SplitTokens, PutsTheFirstNinetyPercentInTrainWhenValFractionIsPointOne) {
  const auto splits = split_tokens(iota_tokens(1000), 0.1, 8);
  ASSERT_EQ(splits.train.size(), 900u);
  ASSERT_EQ(splits.val.size(), 100u);
  EXPECT_EQ(splits.train.front(), 0);
  EXPECT_EQ(splits.train.back(), 899);
  EXPECT_EQ(splits.val.front(), 900);
  EXPECT_EQ(splits.val.back(), 999);
}

TEST(SplitTokens, SaysHowManyTokensThereAreAndAreNeededWhenASplitIsTooSmall) {
  try {
    split_tokens(iota_tokens(300), 0.1, 64);  // val has 30 tokens, a window needs 65
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("val split has 30 tokens"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at least 65"), std::string::npos) << msg;
    EXPECT_NE(msg.find("300 tokens"), std::string::npos) << msg;
    EXPECT_NE(msg.find("val_fraction 0.1)"), std::string::npos) << "no 0.100000: " << msg;
  }
  try {
    split_tokens(iota_tokens(100), 0.5, 64);
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("train split has 50 tokens"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(split_tokens(iota_tokens(650), 0.1, 64));  // 585 / 65: both just fit
  EXPECT_THROW(split_tokens(iota_tokens(1000), 1.5, 8), DataError);
}

TEST(SampleBatch, GivesContiguousWindowsWithYShiftedByOne) {
  const auto tokens = iota_tokens(500);
  const int64_t B = 16;
  const int64_t T = 32;
  std::vector<int64_t> x(B * T);
  std::vector<int64_t> y(B * T);
  std::mt19937_64 rng(42);
  sample_batch(tokens, B, T, rng, x.data(), y.data());
  for (int64_t b = 0; b < B; ++b) {
    const int64_t start = x[b * T];
    ASSERT_GE(start, 0);
    ASSERT_LE(start, 500 - T - 1);
    for (int64_t t = 0; t < T; ++t) {
      ASSERT_EQ(x[b * T + t], start + t) << "row " << b;
      ASSERT_EQ(y[b * T + t], start + t + 1) << "row " << b;
    }
  }
}

TEST(SampleBatch, IsDeterministicAndCoversEveryStartWhenRngIsSeeded) {
  const auto tokens = iota_tokens(12);  // T = 4: starts 0..7
  const int64_t B = 400;
  const int64_t T = 4;
  std::vector<int64_t> x1(B * T), y1(B * T), x2(B * T), y2(B * T);
  std::mt19937_64 rng1(7), rng2(7);
  sample_batch(tokens, B, T, rng1, x1.data(), y1.data());
  sample_batch(tokens, B, T, rng2, x2.data(), y2.data());
  EXPECT_EQ(x1, x2);
  EXPECT_EQ(y1, y2);
  std::vector<int> hits(8, 0);
  for (int64_t b = 0; b < B; ++b) hits.at(static_cast<size_t>(x1[b * T]))++;
  for (int h : hits) EXPECT_GT(h, 20);  // 50 expected each; the last start (7) included
}

TEST(SampleBatch, ThrowsWhenNoWindowFits) {
  std::vector<int64_t> x(8), y(8);
  std::mt19937_64 rng(1);
  EXPECT_THROW(sample_batch(iota_tokens(8), 1, 8, rng, x.data(), y.data()), DataError);
}

}  // namespace
}  // namespace llmprof::data
