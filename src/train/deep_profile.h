// The train loop's side of profile.level=modules|ops: the recording schedule (wait, warmup,
// active, repeat), starting and stopping the tracer between steps, and turning each recorded
// window into modules.csv, ops.csv, activations.csv, memory.csv and trace.json (rundir writes
// them). A participant of the step (llmprof/rundir/participant.h) like the others: the Session
// makes it at profile.level=modules|ops and adds it first, so its tracer sees every phase around
// the other participants' hooks, and its sections of summary.json come from its finish.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/gpu/activity_source.h"
#include "llmprof/gpu/correlate.h"
#include "llmprof/gpu/idle.h"
#include "llmprof/gpu/kernel_table.h"
#include "llmprof/model/flops.h"
#include "llmprof/profile/analysis.h"
#include "llmprof/profile/tracer.h"
#include "llmprof/rundir/participant.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/rundir/tables.h"
#include "llmprof/rundir/trace_gpu.h"

namespace llmprof::train {

// Observes every phase for the whole run (the tracer is told of those of a recorded step); the
// memory probe and any other participant see the same phases beside it.
class DeepProfile : public rundir::RunParticipant {
 public:
  // scope_flops: analytic forward FLOPs of one call of each scope for a micro-batch, -1 = not
  // modelled (model/flops.h gpt_/encoder_scope_forward_flops). analytic_flops_per_step: a training
  // step's (SessionOptions::flops_per_step; 0 = unknown), against which the counted FLOPs are put.
  // gpu: the GPU activity of each recorded window (ops level on a device), or null.
  DeepProfile(const config::Config& cfg,
              const profile::ScopeFlops& scope_flops,
              const profile::Roofs& roofs,
              std::string run_dir,
              double analytic_flops_per_step,
              std::unique_ptr<gpu::ActivitySource> gpu = nullptr,
              int64_t first_step = 1);
  ~DeepProfile() override;

  std::string_view name() const override { return "modules/ops profiler"; }
  // Between steps: opens the window when the schedule reaches a traced step. Steps are numbered
  // from 1, as in every output.
  void before_step(int64_t step) override;
  // Between steps: closes the step (its max_rss_bytes to memory.csv); at the end of a window
  // writes the tables and the trace.
  void after_step(const profile::StepRecord& record) override;
  // A recorded step's phases, to the tracer (memory per phase, backward's scopes).
  void on_phase_begin(profile::Phase phase) override;
  void on_phase_end(profile::Phase phase) override;
  // End of the run (or an early stop): closes an open window, writes what it recorded (and a
  // data-parallel rank's trace) and returns its sections of summary.json.
  rundir::RunFigures finish(const rundir::RunEnd& end) override;

  // A process of several: trace.json names it (distributedInfo), is on rank 0's clock and holds
  // the window's collectives, which `collectives.collectives_between(from_ns, to_ns)` returns
  // (the participant that named the process, which outlives this); it is therefore written at
  // finish(), after the run, from the first window kept until then.
  void set_distributed(const rundir::TraceDistributed& info,
                       const rundir::RunParticipant& collectives);

  // The top ops by self time as formatted lines (RunSummary::top_ops); empty below ops level.
  std::vector<std::string> top_ops_lines(size_t n) const;

 private:
  enum class StepKind { kSkip, kWarmup, kActive };
  StepKind kind_of(int64_t step_number) const;
  bool last_of_window(int64_t step_number) const;
  void process();
  rundir::ModulesFigures modules_figures() const;
  rundir::CountedFlops counted_flops(double analytic_flops_per_step) const;
  rundir::DeepOverhead overhead_figures() const;
  rundir::GpuFigures gpu_figures() const;
  void stop_gpu();  // stops the GPU source and collects the window's records
  // The window's GPU records against its ops: device time per op event, kernels.csv (first
  // window), the idle split of each recorded step.
  std::vector<double> process_gpu(const profile::TraceData& data);
  // trace.json of the first window (data-parallel: kept for finish()).
  void write_first_trace(profile::TraceData&& data);
  void write_deferred_trace();
  // What the run's summary takes from the deep profile; nullopt below profile.level=modules.
  std::optional<rundir::DeepProfileFigures> figures() const;

  config::ProfileConfig cfg_;
  int64_t first_step_;  // the run's first step number (a resumed run's is not 1)
  profile::Level level_;
  std::string run_dir_;
  profile::Roofs roofs_;
  double analytic_flops_per_step_;
  profile::ScopeFlops scope_flops_{};
  std::unique_ptr<profile::Tracer> tracer_;
  bool in_step_ = false;
  // The window in flight: its recorded steps. Over the run: the totals of the closed windows,
  // their memory intervals and phase times (small, per step), and what the tables show.
  std::vector<profile::StepRecord> window_records_;
  std::vector<profile::StepPhases> window_phases_;
  profile::AnalysisTotals totals_;
  std::vector<profile::PhaseMemory> memory_intervals_;
  std::vector<profile::StepPhases> phases_;
  int windows_ = 0;
  profile::Analysis analysis_;
  rundir::TraceStats trace_stats_;
  profile::TracerCalibration calibration_;
  profile::ShapeSampling shape_sampling_;
  profile::ViewSampling view_sampling_;
  int64_t memory_reports_ = 0;
  int64_t dropped_events_ = 0, dropped_scopes_ = 0;
  double post_processing_ms_ = 0;  // over every window
  std::unique_ptr<gpu::ActivitySource> gpu_;
  gpu::GpuRecords window_gpu_;          // the window in flight's records, once collected
  std::vector<gpu::StepIdle> idle_;     // per recorded step (gaps dropped)
  gpu::GpuTables gpu_tables_;           // the first window's
  std::vector<std::string> gpu_trace_;  // the first window's GPU events, for the trace
  int device_ = 0;                      // the CUDA device the records are of
  int64_t gpu_records_ = 0, gpu_unattributed_ = 0;
  int64_t gpu_incomplete_ = 0;  // device records without timestamps, left out (kernel_record.h)
  // Data-parallel: the rank's trace identity, its collectives, and the first window kept.
  std::optional<rundir::TraceDistributed> dist_;
  const rundir::RunParticipant* collectives_ = nullptr;
  struct DeferredTrace {
    profile::TraceData data;
    std::vector<profile::StepRecord> records;
    rundir::TraceOptions options;
  };
  // The first window's GPU activity, rendered once the collectives are known (their kernels
  // carry the collective's args).
  struct DeferredGpu {
    gpu::GpuRecords records;
    std::vector<gpu::CpuOpInterval> ops;
    gpu::Correlation correlation;
    rundir::GpuTraceOptions options;
  };
  std::unique_ptr<DeferredGpu> deferred_gpu_;
  std::unique_ptr<DeferredTrace> deferred_;
};

}  // namespace llmprof::train
