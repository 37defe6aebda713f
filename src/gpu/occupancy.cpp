// Theoretical occupancy of a launch configuration (formula in occupancy.h).
#include "llmprof/gpu/occupancy.h"

#include <algorithm>
#include <climits>

namespace llmprof::gpu {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t unit) { return ceil_div(a, unit) * unit; }
}  // namespace

std::optional<OccupancyEstimate> estimate_occupancy(const KernelRecord& k, const SmLimits& lim) {
  const int64_t threads = k.block.count();
  if (threads <= 0 || k.registers_per_thread < 0 || lim.max_warps_per_sm <= 0) return std::nullopt;
  OccupancyEstimate e;
  e.warps_per_block = static_cast<int>(ceil_div(threads, lim.warp_size));
  const int64_t w = e.warps_per_block;

  // Warp slots (a block larger than the SM's thread limit cannot launch at all).
  e.blocks_by_warps =
      threads > lim.max_threads_per_sm ? 0 : static_cast<int>(lim.max_warps_per_sm / w);

  // Registers are allocated per warp in units of 256, separately in each sub-partition.
  if (k.registers_per_thread > lim.max_regs_per_thread) {
    e.blocks_by_regs = 0;
  } else if (k.registers_per_thread == 0) {
    e.blocks_by_regs = INT_MAX;
  } else {
    const int64_t regs_per_warp =
        round_up(int64_t{k.registers_per_thread} * lim.warp_size, lim.reg_alloc_unit);
    const int64_t warps_per_sub = (lim.regs_per_sm / lim.sub_partitions) / regs_per_warp;
    e.blocks_by_regs = static_cast<int>(warps_per_sub * lim.sub_partitions / w);
  }

  // Shared memory, with the driver's per-block reservation, in 128-byte units.
  const int64_t smem_per_sm = k.smem_config_bytes > 0 ? k.smem_config_bytes : lim.smem_per_sm_bytes;
  const int64_t smem_block =
      round_up(k.shared_mem_bytes() + lim.reserved_smem_per_block_bytes, lim.smem_alloc_unit_bytes);
  e.blocks_by_smem = smem_block > 0
                         ? static_cast<int>(std::min<int64_t>(smem_per_sm / smem_block, INT_MAX))
                         : INT_MAX;

  e.blocks_by_count = lim.max_blocks_per_sm;
  e.active_blocks =
      std::min({e.blocks_by_warps, e.blocks_by_regs, e.blocks_by_smem, e.blocks_by_count});
  e.occupancy = static_cast<double>(e.active_blocks) * e.warps_per_block / lim.max_warps_per_sm;
  return e;
}

}  // namespace llmprof::gpu
