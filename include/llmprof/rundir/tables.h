// The tables of a run directory, as typed rows: one column list per file, one writer and one
// reader per file (src/rundir/). Sources (profile, telemetry, gpu, the train loop) hand their
// records to the writers and never format files themselves; report and plot read through the
// readers in rundir/read.h. Unknown values are nullopt, written as empty fields, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/output/csv.h"

namespace llmprof::profile {
struct Analysis;
struct StepPhases;
struct TraceData;
struct PhaseMemory;
struct StepRecord;
}  // namespace llmprof::profile
namespace llmprof::gpu {
struct GpuTables;
}  // namespace llmprof::gpu
namespace llmprof::telemetry {
struct PowerRow;
}  // namespace llmprof::telemetry

namespace llmprof::rundir {

// ---------------------------------------------------------------------------------------------
// steps.csv: one row per step. Times in ms, memory in bytes, energy in J, rates per second.

struct StepRow {
  int64_t step = 0;  // from 1
  std::optional<double> loss, lr, grad_norm;  // grad_norm: pre-clip global norm; null if not told
  std::optional<double> tokens;               // null: the loop did not say
  std::optional<double> data_ms, forward_ms, backward_ms, optimizer_ms;  // null: not timed
  std::optional<double> step_ms, eval_ms;     // eval_ms: only on steps that ran an eval
  std::optional<double> tokens_per_s, flops, flops_per_s, mfu;  // flops: analytic, per step
  std::optional<double> minor_faults, major_faults, voluntary_switches, involuntary_switches;
  std::optional<double> cpu_ms, max_rss_bytes;  // getrusage deltas over the step; max RSS
  std::optional<double> energy_j, avg_power_w;  // null: no sensor and no estimate
  std::optional<double> energy_estimated;       // 1: a TDP estimate, 0: measured
  // CUDA runs only (null elsewhere). step_ms is then the device's time of the step; host_step_ms
  // the host's (the time to enqueue it); gpu_*_ms each phase's device time from CUDA events.
  std::optional<double> host_step_ms, gpu_step_ms;
  std::optional<double> gpu_data_ms, gpu_forward_ms, gpu_backward_ms, gpu_optimizer_ms;
  // The CUDA caching allocator after the step: peak allocated during it, reserved, reserved but
  // free (fragmentation), cudaMalloc retries so far.
  std::optional<double> device_peak_allocated_bytes, device_reserved_bytes;
  std::optional<double> device_free_reserved_bytes, device_alloc_retries;
  std::optional<double> loss_scale, step_skipped;  // fp16: the scale; 1 = optimizer step skipped
  // A data-parallel run's top steps.csv (merge_rank_steps): the rank whose step was the slowest
  // (its times are the row's); null in a rank's own steps.csv.
  std::optional<double> slowest_rank;
};

// The columns after "step", in file order, each with its field: the writer's header and the
// reader's lookup are this one table.
struct StepColumn {
  std::string_view name;
  std::optional<double> StepRow::*field;
};
const std::vector<StepColumn>& step_columns();

// The present values of one steps.csv column from row `from` on; an unknown column name gives
// none.
std::vector<double> present(const std::vector<StepRow>& rows,
                            std::string_view column,
                            size_t from = 0);

// Appends rows to steps.csv, each flushed as written (a killed run keeps every finished step).
class StepsWriter {
 public:
  explicit StepsWriter(const std::string& path);
  void write(const StepRow& row);

 private:
  output::CsvWriter csv_;
};

// ---------------------------------------------------------------------------------------------
// eval.csv: the loss of one split at one step. perplexity = exp(loss); accuracy null for lm, mlm.

struct EvalRow {
  int64_t step = 0;
  std::string split;  // train | val
  double loss = 0;
  std::optional<double> perplexity, accuracy, eval_ms;
};

class EvalWriter {
 public:
  explicit EvalWriter(const std::string& path);
  void write(const EvalRow& row);

 private:
  output::CsvWriter csv_;
};

// ---------------------------------------------------------------------------------------------
// The deep-profiling tables (profile.level modules and ops), per step, averaged over the
// recorded steps (the `steps` column says how many).

// The roofline columns of ops.csv and modules.csv (profile/roofline.h): counted bytes (a lower
// bound), FLOP/byte, achieved rates against the row's total time, the roof it sits under
// (compute | memory | overhead; empty = unknown), the time at that roof and the time above it.
struct RooflineColumns {
  std::optional<double> bytes, arithmetic_intensity, achieved_gflops_per_s, achieved_gb_per_s;
  std::string bound;
  std::optional<double> roofline_ms, unmodelled_ms, lost_ms;  // unmodelled: never lost
};

// modules.csv: one scope of one block in one pass.
struct ModuleRow {
  std::string scope;             // embedding, block, attn, attn.core, mlp.up, ... or user names
  std::optional<int64_t> block;  // layer index; null for scopes outside the blocks
  std::string pass;              // forward | backward
  std::optional<double> calls, total_ms, mean_ms, self_ms, share_of_pass, flops, mfu, steps;
  RooflineColumns roofline;      // ops level: of the counted ops whose innermost scope this is,
                                 // against self_ms; flops is analytic
  std::optional<double> gpu_ms;  // CUDA runs: device time launched inside it (nested included)
};

// ops.csv: one ATen op.
struct OpRow {
  std::string op;
  std::optional<double> calls, self_ms, total_ms, self_share, flops, alloc_bytes;
  RooflineColumns roofline;  // achieved_gflops_per_s was gflops_per_s before (still read)
  std::string input_shapes;  // the most frequent, e.g. "[768, 128], [128, 384]"
  // View/metadata calls made directly inside this op, counted without a timed record (an op
  // counted that way has calls but no times: self_ms, total_ms and self_share are empty).
  std::optional<double> view_calls;
  std::optional<double> gpu_ms;  // CUDA runs: device time it launched as the innermost op
  std::optional<double> steps;
  // An eval pass's op (ops.csv during "eval"): its figures are per pass, over `evals` passes.
  bool eval = false;
  std::optional<double> evals;
};

// memory.csv: allocator and RSS figures of one phase of one step.
struct MemoryRow {
  int64_t step = 0;
  std::string phase;
  std::optional<double> peak_allocated_bytes, end_allocated_bytes, rss_bytes;
};

// activations.csv: bytes saved for backward by one scope of one block.
struct ActivationRow {
  std::string scope;
  std::optional<int64_t> block;
  std::optional<double> saved_bytes, alloc_bytes, steps;
};

// Whole files, written at the end of the recorded window. Throw IoError.
void write_modules(const std::string& path, const profile::Analysis& analysis);
void write_ops(const std::string& path, const profile::Analysis& analysis);
void write_activations(const std::string& path, const profile::Analysis& analysis);
// One row per (step, phase) of the recorded intervals (profile::memory_per_phase), with the
// step's RSS.
void write_memory(const std::string& path,
                  const std::vector<profile::PhaseMemory>& intervals,
                  const std::vector<profile::StepPhases>& phases);

// trace.json in Chrome trace event format (Perfetto, chrome://tracing) and in the shape of
// PyTorch profiler (Kineto) traces that Holistic Trace Analysis reads: top-level "schemaVersion",
// "distributedInfo": {"rank": 0, ...} (HTA finds the rank with a regex that needs the space after
// the colon) and "deviceProperties" before "traceEvents"; steps as "ProfilerStep#N" and phases
// and module scopes as "user_annotation" slices; ops and backward nodes as "cpu_op" slices with
// an "External id"; memory counters; flows from forward ops to their backward nodes. Host events
// are on the process's id, GPU events (options.extra_events, gpu::gpu_trace_events) on the
// device's. Written whole (tmp + rename), gzip-compressed when options.gzip. Returns what it
// wrote.
struct TraceStats {
  int64_t events = 0;
  int64_t bytes = 0;
  double write_ms = 0;
};
// A data-parallel rank's trace, as PyTorch's profiler writes one per rank for HTA:
// "distributedInfo" {"backend", "rank", "world_size", "pg_count", "pg_config"} names it, every host
// event is on process id = rank, and times are absolute on rank 0's clock (local + offset), so
// the ranks' traces share one time line.
struct TraceDistributed {
  int rank = 0;
  int world_size = 1;
  config::DdpBackend backend = config::DdpBackend::kGloo;  // ddp.backend as resolved: gloo | nccl
  int64_t clock_offset_ns = 0;     // rank 0's clock minus this rank's (0 on one host)
};
// One collective, as Kineto's record_param_comms slice: "Collective name", "In msg nelems",
// "Out msg nelems", "dtype", "Group size", "Process Group Name", "Seq" (and llmprof's bucket,
// step and bytes), on the rank's communication track. Times are this rank's clock.
struct CollectiveSlice {
  std::string name = "allreduce";  // Kineto's collective names: allreduce, broadcast, ...
  int64_t start_ns = 0;            // launch
  int64_t issued_ns = 0;           // the issuing call returned (its GPU kernels launched before)
  int64_t end_ns = 0;              // completion
  int64_t in_nelems = 0, out_nelems = 0;
  std::string dtype = "Float";     // Kineto writes c10's scalar type name
  int64_t group_size = 1;
  std::string pg_name = "0";       // the default group's name
  int64_t seq = 0;                 // the group's collective sequence number
  int64_t step = 0, bucket = -1, bytes = 0;
};
// Kineto's distributedInfo object for a rank (exactly "rank": <k> with the space HTA's regex
// needs); pg_config lists the default group (every rank).
std::string distributed_info_json(const TraceDistributed& d);
// A collective's args, in Kineto's names.
std::string collective_args(const CollectiveSlice& c);

struct TraceOptions {
  std::optional<TraceDistributed> distributed;  // data-parallel: rank, world size, clock offset
  std::vector<CollectiveSlice> collectives;     // the window's collectives (data-parallel)
  std::vector<std::string> extra_events;       // rendered events appended as they are
  std::string device_properties_json = "[]";   // a JSON array, one object per GPU
  int64_t cpu_pid = 0;                          // host events' pid; 0: this process's id
  bool gzip = false;                            // compress (the path should end in .json.gz)
};
TraceStats write_trace(const std::string& path,
                       const profile::TraceData& data,
                       const std::vector<profile::StepRecord>& steps,
                       const TraceOptions& options = {});
// The trace's time zero: the first step's start, or an earlier op's (events render relative to it).
// Distributed traces have none (times are absolute on rank 0's clock): -clock_offset_ns.
int64_t trace_origin_ns(const profile::TraceData& data,
                        const std::vector<profile::StepRecord>& steps,
                        const std::optional<TraceDistributed>& distributed = std::nullopt);

// power.csv: one row per energy sample and channel (t_s from the first sample).
void write_power(const std::string& path, const std::vector<telemetry::PowerRow>& rows);

// kernels.csv: kernel, calls, total_us, mean_us, min_us, max_us, grid, block, registers,
// shared_mem_bytes, est_occupancy, owning_op, owning_scope, owners, steps.
void write_kernels(const std::string& path, const gpu::GpuTables& tables);

}  // namespace llmprof::rundir
