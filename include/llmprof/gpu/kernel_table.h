// GPU time tables of a recorded window: kernels.csv's rows (rundir::write_kernels; one per
// kernel and launch configuration), and GPU milliseconds per CPU op and per module scope, for the
// join into ops.csv and modules.csv. Like those tables, counts and totals are per step, averaged over the
// recorded steps; mean/min/max are per call.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llmprof/gpu/correlate.h"
#include "llmprof/gpu/kernel_record.h"
#include "llmprof/gpu/occupancy.h"

namespace llmprof::gpu {

// One kernel name with one launch configuration (grid, block, registers, shared memory): the
// unit occupancy is a property of.
struct KernelRow {
  std::string kernel;
  double calls = 0;                            // per step
  double total_us = 0;                         // per step
  double mean_us = 0, min_us = 0, max_us = 0;  // per call
  Dim3 grid, block;
  int registers = 0;                    // per thread
  int64_t shared_mem_bytes = 0;         // static + dynamic, per block
  std::optional<double> est_occupancy;  // theoretical occupancy, an estimate (occupancy.h)
  std::string owning_op;                // the op (and scope) with the most of this row's time
  std::string owning_scope;
  int owners = 0;  // distinct (op, scope) pairs that launched it
};

// GPU time (kernels, memcpys, memsets) launched from inside one CPU op name, per step.
struct OpGpuRow {
  std::string op;  // or "(unattributed)"
  double gpu_ms = 0;
  double launches = 0;
};

// GPU time launched from inside one module scope of one block and pass, per step.
struct ScopeGpuRow {
  std::string scope;  // or "(unattributed)"
  int block = -1;
  std::string pass;  // as the CPU op carried it; may be empty
  double gpu_ms = 0;
  double launches = 0;
};

struct GpuTables {
  int n_steps = 1;
  std::vector<KernelRow> kernels;                      // by total_us, descending
  std::vector<OpGpuRow> ops;                           // by gpu_ms, descending
  std::vector<ScopeGpuRow> scopes;                     // by gpu_ms, descending
  double kernel_ms = 0, memcpy_ms = 0, memset_ms = 0;  // per step, summed (not a union)
  int64_t unattributed_activities = 0;                 // over the window: no launch record or no op
};

// Aggregates a window of n_steps recorded steps (n_steps >= 1).
GpuTables aggregate_gpu(const GpuRecords& gpu,
                        const std::vector<CpuOpInterval>& ops,
                        const Correlation& correlation,
                        int n_steps,
                        const SmLimits& limits = {});

// The tables of two disjoint sets of recorded steps (two windows) as one over all their steps:
// per-step figures weighted by each side's n_steps, per-call mean from the merged totals, min and
// max over both, the owning op and scope of the side with more of the row's time. A row's owners
// is the larger side's count (a lower bound of the distinct owners over both).
GpuTables merge_gpu_tables(const GpuTables& a, const GpuTables& b);

// "128x1x1".
std::string format_dim3(const Dim3& d);

}  // namespace llmprof::gpu
