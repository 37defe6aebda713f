// Occupancy ESTIMATE of a kernel launch from its configuration: the theoretical occupancy of the
// CUDA Occupancy Calculator (the algorithm of cuda_occupancy.h's
// cudaOccMaxActiveBlocksPerMultiprocessor, without the partitioned-cache and cluster cases). It is
// an upper bound of the achieved occupancy, which needs hardware counters (sm__warps_active);
// kernels.csv labels it an estimate.
#pragma once

#include <cstdint>
#include <optional>

#include "llmprof/gpu/kernel_record.h"

namespace llmprof::gpu {

// Per-SM resource limits. Defaults: H100 (compute capability 9.0), from the CUDA C++ Programming
// Guide, "Compute Capabilities", Table "Technical Specifications per Compute Capability" (9.0):
// 2048 resident threads = 64 warps, 32 resident blocks, 64 K 32-bit registers, 255 registers per
// thread, 228 KB shared memory per SM (227 KB per block), 1 KB reserved per block; allocation
// granularities from cuda_occupancy.h (cudaOccRegAllocationGranularity: 256 registers per warp;
// cudaOccSMemAllocationGranularity: 128 bytes for cc 8.x-9.x; 4 sub-partitions per SM).
// 132 SMs: H100 SXM5 (NVIDIA H100 Tensor Core GPU Architecture whitepaper; 114 on H100 PCIe).
struct SmLimits {
  int max_threads_per_sm = 2048;
  int max_warps_per_sm = 64;
  int max_blocks_per_sm = 32;
  int regs_per_sm = 65536;
  int max_regs_per_thread = 255;
  int64_t smem_per_sm_bytes = 233472;  // 228 KiB, the largest carveout
  int64_t reserved_smem_per_block_bytes = 1024;
  int warp_size = 32;
  int reg_alloc_unit = 256;  // registers, per warp
  int smem_alloc_unit_bytes = 128;
  int sub_partitions = 4;  // registers are split between the SM's 4 schedulers
  int num_sms = 132;
};

// How one launch configuration fills an SM.
struct OccupancyEstimate {
  int warps_per_block = 0;
  int blocks_by_warps = 0;  // each limit: resident blocks per SM it allows
  int blocks_by_regs = 0;
  int blocks_by_smem = 0;
  int blocks_by_count = 0;  // max_blocks_per_sm
  int active_blocks = 0;    // the smallest of the four
  double occupancy = 0;     // active_blocks * warps_per_block / max_warps_per_sm, in [0, 1]
};

// Theoretical occupancy of a launch:
//   warps/block  W = ceil(threads / 32)
//   by warps     floor(max_warps / W)
//   by registers R = roundup(regs * 32, 256) per warp;
//                floor(floor(regs_per_sm / 4 / R) * 4 / W)  (4 sub-partitions)
//   by smem      S = roundup(static + dynamic + 1 KiB reserved, 128) per block;
//                floor(smem_per_sm / S), smem_per_sm = the kernel's configured carveout
//                when CUPTI reported it, else limits.smem_per_sm_bytes
//   occupancy    min(the three, max_blocks_per_sm) * W / max_warps
// nullopt when the configuration is unknown (no threads per block recorded).
std::optional<OccupancyEstimate> estimate_occupancy(const KernelRecord& kernel,
                                                    const SmLimits& limits = {});

}  // namespace llmprof::gpu
