// The column lists of the run directory's tables (steps.csv's is step_columns()): the writers
// print them as headers, the readers look the same names up. Private to src/rundir.
#pragma once

#include <string_view>
#include <vector>

namespace llmprof::rundir::columns {

inline const std::vector<std::string_view> kEval = {"step",     "split",    "loss",
                                                    "perplexity", "accuracy", "eval_ms"};
// The roofline columns, in this order, in both modules.csv and ops.csv.
#define LLMPROF_ROOFLINE_COLUMNS                                                       \
  "bytes", "arithmetic_intensity", "achieved_gflops_per_s", "achieved_gb_per_s", "bound", \
      "roofline_ms", "unmodelled_ms", "lost_ms"
inline const std::vector<std::string_view> kModules = {
    "scope", "block", "pass", "calls", "total_ms", "mean_ms", "self_ms",
    "share_of_pass", "flops", "mfu", LLMPROF_ROOFLINE_COLUMNS, "gpu_ms", "steps"};
inline const std::vector<std::string_view> kOps = {
    "op", "calls", "self_ms", "total_ms", "self_share", "flops", LLMPROF_ROOFLINE_COLUMNS,
    "alloc_bytes", "input_shapes", "view_calls", "gpu_ms", "steps", "during", "evals"};
#undef LLMPROF_ROOFLINE_COLUMNS
inline const std::vector<std::string_view> kActivations = {"scope", "block", "saved_bytes",
                                                           "alloc_bytes", "steps"};
inline const std::vector<std::string_view> kMemory = {
    "step", "phase", "peak_allocated_bytes", "end_allocated_bytes", "rss_bytes"};
inline const std::vector<std::string_view> kPower = {
    "t_s", "source", "domain", "watts", "joules_cum", "utilisation", "estimated"};
inline const std::vector<std::string_view> kKernels = {
    "kernel", "calls", "total_us", "mean_us", "min_us", "max_us", "grid", "block", "registers",
    "shared_mem_bytes", "est_occupancy", "owning_op", "owning_scope", "owners", "steps"};

// Data-parallel communication (rundir/comm_tables.h).
inline const std::vector<std::string_view> kComm = {
    "rank", "step", "sync_step", "bucket", "bucket_count", "first_layout", "bytes", "elements",
    "dtype", "ready_ns", "launch_ns", "end_ns", "comm_ms", "backward_ms_at_launch"};
inline const std::vector<std::string_view> kPhaseSpans = {"rank", "step", "phase", "start_ns",
                                                          "end_ns"};
inline const std::vector<std::string_view> kClocks = {
    "rank", "rounds", "start_at_ns", "start_offset_ns", "start_residual_ns", "end_at_ns",
    "end_offset_ns", "end_residual_ns", "drift_ns_per_s", "drift_uncertainty_ns_per_s"};
inline const std::vector<std::string_view> kCollectives = {
    "step", "bucket", "rank", "first_layout", "bytes", "elements", "dtype", "launch_aligned_ns",
    "end_aligned_ns", "duration_ms", "wait_ms", "latency_ms", "algbw_gb_per_s", "busbw_gb_per_s",
    "last_rank", "world_size", "hidden_ms", "exposed_ms"};
inline const std::vector<std::string_view> kCommSteps = {
    "step", "rank", "first_layout", "start_aligned_ns", "step_ms", "compute_ms",
    "exposed_comm_ms", "other_ms", "idle_ms", "comm_ms", "hidden_comm_ms", "overlap", "data_ms",
    "forward_ms", "backward_ms", "backward_compute_ms", "optimizer_ms", "launch_lag_ms",
    "last_launches", "buckets"};

}  // namespace llmprof::rundir::columns
