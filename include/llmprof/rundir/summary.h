// summary.json as one typed document: the figures every producer returns (train's statistics,
// the deep profile's, the energy monitor's), one writer and one reader. Schema
// kSummarySchemaVersion (rundir/files.h); fields in docs/summary.md (llmprof docs summary).
// Nullopt is JSON null: unknown, never 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/base/stats.h"
#include "llmprof/config/enums.h"
#include "llmprof/rundir/summary_context.h"
#include "llmprof/telemetry/energy_figures.h"

namespace llmprof::rundir {

using Stats = llmprof::Summary;  // n, mean, median, p10, p90, min, max, stddev, cv

struct StepCounts {
  int64_t completed = 0, max_steps = 0, warmup_excluded = 0, measured = 0;
};

// Statistics over the measured (post-warm-up) steps; a phase never timed is nullopt.
struct TimingFigures {
  std::optional<Stats> step_ms, data_ms, forward_ms, backward_ms, optimizer_ms;
  std::string note;  // why there is no reconciliation ("" when there is one)
  // The phases' medians summed, and the step's median minus that (loop bookkeeping).
  std::optional<double> phase_sum_median_ms, unattributed_median_ms;
};

struct ThroughputFigures {
  std::optional<Stats> tokens_per_s, samples_per_s;
};

// FLOPs counted from op shapes (profile.level=ops); written by the deep profile.
struct CountedFlops {
  std::optional<double> matmul_per_step, other_per_step, vs_analytic_ratio;
  std::string note;  // why there are none, or why they undercount; "" when neither
};

struct FlopsFigures {
  std::optional<double> analytic_per_step;
  std::string formula;
  std::optional<Stats> achieved_flops_per_s;
  std::optional<CountedFlops> counted;  // only with a deep profile (modules|ops)
};

struct MfuFigures {
  std::optional<Stats> value;
  double peak_flops_per_s = 0;
  std::string peak_source, peak_method;
  std::string warning;  // MFU over 100%: the peak was measured on a busy machine
};

// The last eval's losses.
struct EvalLoss {
  int64_t step = 0;
  std::optional<double> train_loss, val_loss, train_perplexity, val_perplexity;
  std::optional<double> train_accuracy, val_accuracy;  // classify only
  std::string accuracy_note;
};

struct LossFigures {
  std::string task;  // lm | mlm | classify | custom
  std::string perplexity_note;
  std::optional<double> final_train_step_loss;
  std::optional<EvalLoss> eval;  // nullopt: no eval ran (final_val_loss null and a note)
  std::string note;
};

struct ProcessFigures {
  std::optional<Stats> minor_faults_per_step, involuntary_switches_per_step, cpu_ms_per_step;
};

// The deep profile's own estimated cost per recorded step (profile.level=modules|ops).
struct DeepOverhead {
  double events_per_step = 0, scopes_per_step = 0, ns_per_event = 0,
         ns_per_call_record_function = 0, record_function_ms_per_recorded_step = 0;
  std::optional<double> record_function_fraction_of_recorded_step;
  double untimed_events_per_step = 0, ns_per_untimed_event = 0,
         untimed_events_observed_per_step = 0, hidden_calls_per_step = 0, ns_per_hidden_call = 0,
         memory_reports_per_step = 0, ns_per_memory_report = 0, ns_per_scope = 0,
         ns_per_call_reading_shapes = 0, shape_read_fraction = 0, estimated_ms_per_recorded_step = 0;
  std::optional<double> estimated_fraction_of_recorded_step;
  double post_processing_ms = 0;
};

// Writing trace.json (the first recording window).
struct TraceCost {
  int64_t windows = 1, events = 0, bytes = 0;
  double bytes_per_event = 0, write_ms = 0;
};

// The profiler's own cost at this level: clock reads per step x the measured cost of one read.
struct OverheadFigures {
  config::ProfileLevel level = config::ProfileLevel::kPhases;
  double clock_read_ns = 0;
  std::optional<double> events_per_step;  // nullopt: no step ran (the estimates are absent)
  double estimated_ms_per_step = 0;
  std::optional<double> estimated_fraction_of_step;
  std::optional<DeepOverhead> deep;
  std::optional<TraceCost> trace;
};

struct ShapeFigures {
  int64_t read_steps = 0, mapped_steps = 0, unmapped_steps = 0, unconfirmed_steps = 0;
  bool read_every_step_after_a_change = false;
  int64_t interval = 0;
};

struct ViewFigures {
  int64_t hidden_calls = 0, counted_from_read_steps = 0, mapped_steps = 0, unconfirmed_steps = 0,
          lost_steps = 0;
  std::string how;
  std::string note;  // the undercount, when views were lost
};

// modules.csv's reconciliation: scopes against the phases they sit in.
struct ModulesFigures {
  int64_t recorded_steps = 0, windows = 0;
  double forward_scopes_ms = 0, forward_phase_ms = 0;
  std::optional<double> forward_residual_fraction;
  double backward_nodes_ms = 0, backward_phase_ms = 0;
  std::optional<double> backward_residual_fraction;
  int64_t dropped_events = 0, dropped_scopes = 0;
  std::optional<int64_t> eval_passes_recorded;  // ops level, when eval passes were recorded
  std::optional<ShapeFigures> shapes;
  std::optional<ViewFigures> views;
};

// GPU idle time of the recorded steps, averaged per step.
struct GpuIdleFigures {
  int64_t steps = 0;
  std::string reason;  // when steps == 0
  double window_ms = 0, busy_ms = 0, idle_ms = 0;
  std::optional<double> busy_fraction;
  double host_bound_ms = 0, data_bound_ms = 0, sync_bound_ms = 0;
};

struct GpuFigures {
  int64_t records = 0, dropped_records = 0, incomplete_records = 0, unattributed_activities = 0;
  double kernel_ms_per_step = 0, memcpy_ms_per_step = 0, memset_ms_per_step = 0;
  std::string kernels_window;
  std::optional<double> launched_by_ops_ms_per_step, outside_scopes_ms_per_step;
  GpuIdleFigures idle;
};

// What profile.level=modules|ops adds to the summary (train::DeepProfile::figures()).
struct DeepProfileFigures {
  ModulesFigures modules;
  CountedFlops counted;
  DeepOverhead overhead;
  std::optional<TraceCost> trace;
  std::optional<GpuFigures> gpu;
};

// summary.json "distributed" (data-parallel runs). A rank's own summary names its rank, the top
// directory and a digest of its parameters; the merged top summary has the layout and rank 0's
// all-reduce time and the communication analysis.
// One rank's own figures in a merged summary (distributed.ranks): medians after warm-up, from
// the rank's summary.json.
struct RankFigures {
  int64_t rank = 0;
  std::optional<double> step_ms, data_ms, forward_ms, backward_ms, optimizer_ms;
  std::optional<double> tokens_per_s, mfu, final_train_step_loss;
};

struct DistributedFigures {
  int64_t world_size = 0;
  std::optional<int64_t> rank;  // set: a rank's own summary; unset: the merged one
  std::string top_dir, parameter_digest;  // a rank's
  // The merged summary's:
  std::string backend, launcher;
  bool overlap = false;
  double bucket_mb = 0, first_bucket_mb = 0;
  std::vector<int64_t> bucket_bytes;  // the last layout's buckets (bucket_count = their number)
  int64_t bytes_per_step = 0;
  std::optional<double> rank0_comm_ms_first_step, rank0_comm_ms_per_step_median;
  std::string comm_ms_note, times_note;
  std::vector<std::string> rank_dirs;
  // What the merged summary's timing, throughput, FLOPs and MFU are (global: all ranks' work over
  // the slowest rank's step), and each rank's own figures, the straggler's first.
  std::string figures_scope;
  std::vector<RankFigures> ranks;
  std::optional<CommFigures> comm;  // dist's analysis of every rank's records
  std::string comm_error;           // why there is none: a rank's records could not be read
};

struct Summary {
  int schema_version = 0;  // as read; the writer writes kSummarySchemaVersion
  std::optional<config::RunStatus> status;  // nullopt: a file without one (null)
  std::string message;                      // why a run stopped; "" is null
  std::optional<config::ProfileLevel> profile_level;  // later field
  std::optional<StepCounts> steps;
  double wall_s = 0;
  std::optional<int64_t> parameters;
  std::optional<TimingFigures> timing;
  std::optional<ThroughputFigures> throughput;
  std::optional<FlopsFigures> flops;
  std::optional<MfuFigures> mfu;
  std::optional<LossFigures> loss;
  std::optional<int64_t> peak_rss_bytes;  // memory.peak_rss_bytes
  std::optional<ProcessFigures> process;
  std::optional<OverheadFigures> overhead;  // profiler_overhead
  std::optional<ModulesFigures> modules;
  std::optional<GpuFigures> gpu;
  std::optional<telemetry::EnergyFigures> energy;
  std::optional<DistributedFigures> distributed;
  std::vector<std::string> config_notes;
  RunContext context;  // data, model, resumed_from, init_from, cuda_graphs, plan
  // The merged summary of a data-parallel run: its top directory, and the mean of the ranks'
  // last losses (NaN, written null, when it diverged).
  std::string run_dir;
  std::optional<double> final_global_train_loss;

  // Read back, not written: fields the file did not have that were added later (a note each),
  // and fields this version does not know (JSON pointer -> JSON text, written back by a rewrite).
  std::vector<std::string> read_notes;
  std::map<std::string, std::string> unknown;

  // Medians, null when unknown: the figures sweeps and reports quote.
  std::optional<double> median_step_ms() const;
  std::optional<double> median_tokens_per_s() const;
  std::optional<double> median_mfu() const;
};

// The top-level keys summary.json may hold, known to this version (docs and the reader).
const std::vector<std::string>& summary_keys();
// docs/summary.md: every field, its type and when it is written, from the struct's writer.
std::string summary_fields_doc();

// The document's text: keys in a fixed order, two-space indent, a final newline.
std::string summary_text(const Summary& s);
// Writes path (temp + rename).
void write_summary(const std::string& path, const Summary& s);
// Parses a summary.json text; errors name `file`: invalid JSON, a field of the wrong type, a
// missing first-version field (schema_version), a newer schema_version, an unknown status.
Summary parse_summary(const std::string& text, const std::string& file);

}  // namespace llmprof::rundir
