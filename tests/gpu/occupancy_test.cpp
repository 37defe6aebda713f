#include "llmprof/gpu/occupancy.h"

#include <gtest/gtest.h>

namespace llmprof::gpu {
namespace {

KernelRecord launch(int threads, int regs, int smem_bytes) {
  KernelRecord k;
  k.block = {threads, 1, 1};
  k.registers_per_thread = regs;
  k.dynamic_smem_bytes = smem_bytes;
  return k;
}

// H100 limits (SmLimits defaults): 64 warps, 32 blocks, 65536 regs in 4 sub-partitions,
// 233472 B shared memory, 1024 B reserved per block, allocation units 256 regs / 128 B.
//
// 256 threads, 32 regs, no shared memory:
//   W = 256/32 = 8 warps
//   warps: 64/8 = 8 blocks
//   regs:  32*32 = 1024 per warp (a multiple of 256); 16384/1024 = 16 warps per sub-partition;
//          16*4/8 = 8 blocks
//   smem:  roundup(0 + 1024, 128) = 1024; 233472/1024 = 228 blocks
//   active = min(8, 8, 228, 32) = 8 -> 8*8/64 = 1.0
TEST(EstimateOccupancy, FullOccupancyWhenWarpSlotsAreTheLimit) {
  const auto e = estimate_occupancy(launch(256, 32, 0));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->warps_per_block, 8);
  EXPECT_EQ(e->blocks_by_warps, 8);
  EXPECT_EQ(e->blocks_by_regs, 8);
  EXPECT_EQ(e->blocks_by_smem, 228);
  EXPECT_EQ(e->active_blocks, 8);
  EXPECT_DOUBLE_EQ(e->occupancy, 1.0);
}

// 128 threads, 64 regs, 60000 B dynamic shared memory:
//   W = 4; warps: 64/4 = 16 blocks
//   regs:  64*32 = 2048 per warp; 16384/2048 = 8 per sub-partition; 8*4/4 = 8 blocks
//   smem:  roundup(60000 + 1024, 128) = 61056; 233472/61056 = 3.82 -> 3 blocks
//   active = 3 -> 3*4/64 = 0.1875
TEST(EstimateOccupancy, SharedMemoryLimitsBlocks) {
  const auto e = estimate_occupancy(launch(128, 64, 60000));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->blocks_by_warps, 16);
  EXPECT_EQ(e->blocks_by_regs, 8);
  EXPECT_EQ(e->blocks_by_smem, 3);
  EXPECT_EQ(e->active_blocks, 3);
  EXPECT_DOUBLE_EQ(e->occupancy, 0.1875);
}

// 256 threads, 37 regs, 20000 B: registers bind, with rounding to the 256-register unit:
//   W = 8; warps: 8 blocks
//   regs:  37*32 = 1184 -> 1280 per warp; 16384/1280 = 12.8 -> 12 per sub-partition;
//          12*4/8 = 6 blocks
//   smem:  roundup(21024, 128) = 21120; 233472/21120 = 11.05 -> 11 blocks
//   active = 6 -> 6*8/64 = 0.75
TEST(EstimateOccupancy, RegisterRoundingLimitsBlocks) {
  const auto e = estimate_occupancy(launch(256, 37, 20000));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->blocks_by_regs, 6);
  EXPECT_EQ(e->blocks_by_smem, 11);
  EXPECT_DOUBLE_EQ(e->occupancy, 0.75);
}

// The driver's configured carveout, when CUPTI reports it, replaces the 228 KiB maximum: with
// 100 KiB configured the 60000 B launch above fits 102400/61056 = 1 block -> 4/64.
TEST(EstimateOccupancy, UsesTheConfiguredCarveoutWhenKnown) {
  KernelRecord k = launch(128, 64, 60000);
  k.smem_config_bytes = 100 * 1024;
  EXPECT_DOUBLE_EQ(estimate_occupancy(k)->occupancy, 4.0 / 64);
}

TEST(EstimateOccupancy, ImpossibleAndUnknownLaunches) {
  EXPECT_DOUBLE_EQ(estimate_occupancy(launch(256, 256, 0))->occupancy, 0.0) << "> 255 regs";
  EXPECT_DOUBLE_EQ(estimate_occupancy(launch(4096, 16, 0))->occupancy, 0.0) << "> 2048 threads";
  EXPECT_FALSE(estimate_occupancy(launch(0, 32, 0)).has_value());
  // Small blocks hit the 32-blocks-per-SM cap: 32 threads -> 32 blocks of 1 warp = 0.5.
  EXPECT_DOUBLE_EQ(estimate_occupancy(launch(32, 16, 0))->occupancy, 0.5);
}

}  // namespace
}  // namespace llmprof::gpu
