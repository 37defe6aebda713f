// The roofline of a row: bound on both sides of the ridge and far above both roofs, the time at
// the roof summed per call, and nulls where a model or a roof is missing.
#include <gtest/gtest.h>

#include "llmprof/profile/roofline.h"

namespace llmprof::profile {
namespace {

// 100 GFLOP/s and 20 GB/s: the ridge is at 5 FLOP/byte.
constexpr Roofs kRoofs{100e9, 20e9};

TEST(Roofline, BelowTheRidgeIsMemoryBound) {
  RooflineSums s;
  s.add(1e6, 1e6, kRoofs);  // 1 FLOP/B: memory 0.05 ms, compute 0.01 ms
  const RooflinePoint p = s.point(0.08, 1.0, kRoofs);
  EXPECT_EQ(p.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(*p.roofline_ms, 0.05);
  EXPECT_NEAR(*p.lost_ms, 0.03, 1e-12);
  EXPECT_DOUBLE_EQ(*p.arithmetic_intensity, 1.0);
  EXPECT_NEAR(*p.achieved_gb_per_s, 12.5, 1e-9);      // 1 MB in 0.08 ms
  EXPECT_NEAR(*p.achieved_gflops_per_s, 12.5, 1e-9);  // 1 MFLOP in 0.08 ms
}

TEST(Roofline, AboveTheRidgeIsComputeBound) {
  RooflineSums s;
  s.add(1e9, 1e7, kRoofs);  // 100 FLOP/B: compute 10 ms, memory 0.5 ms
  const RooflinePoint p = s.point(12, 1.0, kRoofs);
  EXPECT_EQ(p.bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(*p.roofline_ms, 10);
  EXPECT_DOUBLE_EQ(*p.lost_ms, 2);
}

TEST(Roofline, FarAboveBothRoofsIsOverhead) {
  RooflineSums s;
  for (int i = 0; i < 100; ++i) s.add(1e3, 4e3, kRoofs);  // tiny calls: 0.2 us each at the roof
  const RooflinePoint below = s.point(0.19, 1.0, kRoofs);  // 9.5x the roof: still memory
  EXPECT_EQ(below.bound, Bound::kMemory);
  const RooflinePoint over = s.point(0.21, 1.0, kRoofs);
  EXPECT_EQ(over.bound, Bound::kOverhead);
  EXPECT_NEAR(*over.roofline_ms, 0.02, 1e-12);
}

TEST(Roofline, EachCallSitsUnderItsOwnRoof) {
  RooflineSums s;
  s.add(1e9, 1e6, kRoofs);  // compute: 10 ms (memory 0.05)
  s.add(1e6, 1e8, kRoofs);  // memory: 5 ms (compute 0.01)
  // Per call: 10 + 5; from the sums it would be max(10.01, 5.05) = 10.01.
  const RooflinePoint p = s.point(20, 1.0, kRoofs);
  EXPECT_DOUBLE_EQ(*p.roofline_ms, 15);
  EXPECT_EQ(p.bound, Bound::kCompute);  // 10.01 ms of compute against 5.05 of memory
}

TEST(Roofline, ScaledPerStepAndFasterThanTheRoofLosesNothing) {
  RooflineSums s;
  s.add(std::nullopt, 2e6, kRoofs);  // a copy: bytes only; 0.1 ms at the memory roof
  s.add(std::nullopt, 2e6, kRoofs);
  const RooflinePoint p = s.point(0.05, 0.5, kRoofs);  // two steps recorded: per step
  EXPECT_DOUBLE_EQ(*p.bytes, 2e6);
  EXPECT_DOUBLE_EQ(*p.roofline_ms, 0.1);
  EXPECT_DOUBLE_EQ(*p.lost_ms, 0);  // above the memory roof: the data sat in cache
  EXPECT_FALSE(p.arithmetic_intensity.has_value());
  EXPECT_FALSE(p.achieved_gflops_per_s.has_value());
  EXPECT_NEAR(*p.achieved_gb_per_s, 40, 1e-9);
}

TEST(Roofline, UnknownRoofOrModelGivesNull) {
  RooflineSums none;
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.point(1, 1, kRoofs).roofline_ms.has_value());
  EXPECT_FALSE(none.point(1, 1, kRoofs).bytes.has_value());
  const Roofs no_bandwidth{100e9, 0};
  RooflineSums s;
  s.add(1e9, 1e6, no_bandwidth);
  const RooflinePoint p = s.point(12, 1.0, no_bandwidth);
  EXPECT_DOUBLE_EQ(*p.bytes, 1e6);  // counted even without a roof
  EXPECT_FALSE(p.bound.has_value());
  EXPECT_FALSE(p.lost_ms.has_value());
  EXPECT_EQ(bound_name(Bound::kOverhead), "overhead");
}

}  // namespace
}  // namespace llmprof::profile
