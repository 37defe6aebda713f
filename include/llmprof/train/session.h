// The instrumented step, for any training loop: a Session owns one run directory and everything
// that measures into it (phase timers, the modules/ops profiler on its schedule, memory, energy,
// getrusage, steps.csv, eval.csv, summary.json, trace.json); a Step is one optimizer step of the
// caller's loop. `llmprof train` is one client of it; a user's own LibTorch loop is another:
//
//   llmprof::Session session(cfg, options);                 // opens runs/<name>/
//   for (int64_t i = 0; i < steps; ++i) {
//     llmprof::Step step = session.step();                  // the step's clock starts
//     { auto p = step.phase(llmprof::Phase::kForward); loss = model(x); }
//     { auto p = step.phase(llmprof::Phase::kBackward); loss.backward(); }
//     { auto p = step.phase(llmprof::Phase::kOptimizer); opt.step(); opt.zero_grad(); }
//     step.end();                                           // ... and stops: the timed step
//     step.set_loss(loss.item<double>());                   // reads after timing
//   }                                                       // the row is written here
//   llmprof::RunSummary s = session.finish();               // summary.json
//
// Nothing between step() and end() allocates, locks, formats or does I/O on llmprof's side: each
// phase is two clock reads into a preallocated record. The library never prints to stdout and
// never exits; errors are llmprof::Error (llmprof/error.h). Torch-free header.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/profile/participant.h"
#include "llmprof/profile/phase.h"
#include "llmprof/rundir/participant.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/rundir/tables.h"

namespace llmprof::config {
struct Config;
}
namespace llmprof::gpu {
class ActivitySource;
}

namespace llmprof::train {

struct RuntimeInfo;
class Session;

// How a run ended: config::RunStatus, whose name table summary.json and sweep.csv write.
using config::RunStatus;
// "completed", "diverged", "failed", "interrupted": config::name(status) as a C string.
const char* run_status_name(RunStatus status);

// What the run directory cannot know by itself: the model and the work of a step.
struct SessionOptions {
  std::string output_dir;              // parent of the run directory; empty = output.dir
  std::string run_label = "run";       // stem of an auto-named run directory
  bool quiet = false;                  // no progress lines
  std::vector<std::string> command_line;  // recorded in env.json
  std::string model_description;       // one log line, e.g. "mlp 784-256-10"
  std::optional<config::TaskKind> task;  // lm | mlm | classify; unset = "custom" (summary.json)
  int64_t parameters = 0;              // model parameters; 0 = unknown (null)
  int64_t tokens_per_step = 0;         // tokens (or samples) per optimizer step; 0 = unknown
  int64_t samples_per_step = 0;        // sequences/examples per optimizer step; 0 = unknown
  double flops_per_step = 0;           // analytic FLOPs of a training step; 0 = unknown (no MFU)
  std::string flops_formula;           // how flops_per_step was computed (summary.json)
  // Analytic forward FLOPs of one call of module scopes, by scope name ("conv1", "attn.qkv");
  // scopes not listed are not modelled (their modules.csv flops and mfu stay null).
  std::vector<std::pair<std::string, double>> scope_forward_flops;
  int64_t max_steps = 0;               // for progress and the schedule; 0 = schedule.max_steps
  // The number of the first step (train.resume_from: the checkpoint's step + 1). The profile
  // schedule and the warm-up steps count from this run's first step.
  int64_t first_step = 1;
  // GPU activity of the windows recorded at profile.level=ops: kernels, copies and runtime calls
  // to attribute to ops and modules. Unset = CUPTI on a CUDA device, nothing on the CPU; tests
  // (and other record sources) plug in here.
  std::function<std::unique_ptr<gpu::ActivitySource>()> gpu_activity;
};

// One eval of a step: written to eval.csv (perplexity = exp(loss)) and the progress log.
struct EvalRecord {
  std::string split;                   // train | val | a set's name
  double loss = 0;
  std::optional<double> accuracy;      // classify
};

// Typed results of a finished run (summary.json holds these and more).
struct RunSummary {
  // The run: a data-parallel run's top directory where this process merged it (rank 0; its
  // figures global: all ranks' tokens over the slowest rank's step), else this process's own.
  std::string run_dir;
  int world_size = 1;    // data-parallel: the ranks of the run
  std::string rank_dir;  // data-parallel: this rank's own directory
  std::optional<double> rank_tokens_per_s, rank_median_step_ms;  // data-parallel: this rank's
  RunStatus status = RunStatus::kCompleted;
  std::string message;
  int64_t steps_completed = 0;
  std::optional<double> final_train_loss;
  std::optional<double> final_val_loss;
  std::optional<double> median_step_ms;  // null when every step was warm-up
  std::optional<double> tokens_per_s;
  std::optional<double> mfu;
  std::vector<std::string> top_ops;    // ops level: the top ops by self time, formatted
};

// RAII phase of a step: `auto p = step.phase(Phase::kForward);`. Non-copyable, non-movable
// (C++17 returns it in place).
class PhaseScope {
 public:
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;
  PhaseScope(PhaseScope&&) = delete;
  PhaseScope& operator=(PhaseScope&&) = delete;

 private:
  friend class Step;
  PhaseScope(profile::PhaseRecorder& recorder, profile::Phase phase) : phase_(recorder, phase) {}
  profile::ScopedPhase phase_;
};

// One optimizer step. Created by Session::step(), which starts its clock; end() stops it. The
// setters fill the row afterwards; the row is written when the Step is destroyed (not when an
// exception unwinds it: a step that failed has no row). A row that cannot be written (disk full)
// throws no exception from the destructor: the Session keeps the error and throws it from the
// next step() and reports it from finish(). One Step at a time per Session.
class Step {
 public:
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
  Step(Step&&) = delete;
  Step& operator=(Step&&) = delete;
  ~Step();

  // Times one phase (data, forward, backward, optimizer) until the returned scope ends. A phase
  // may run several times in a step (grad accumulation): the times add up.
  PhaseScope phase(profile::Phase phase);
  // Ends the timed step (idempotent; the destructor calls it when the caller did not).
  void end();
  // One micro-batch's backward, inside its phase, with every participant around it (data
  // parallelism arms its gradient all-reduce here). sync = false: the gradients accumulate
  // locally (DDP's no_sync, every micro-batch of an accumulation but the last). Use it instead of
  // loss.backward() where a participant takes part (a data-parallel loop).
  void backward(const at::Tensor& loss, bool sync = true);
  // After the optimizer and set_loss (ends the step if it was not): asks every participant
  // whether to go on (data parallelism: one all-gather, so every rank decides the same).
  // stop_requested: this process wants to stop (diverged, a signal).
  profile::StepDecision agree(bool stop_requested);

  int64_t number() const { return number_; }  // counts from 1
  void set_loss(double loss);                  // the step's training loss
  void set_lr(double lr);
  void set_grad_norm(double norm);             // pre-clip global norm
  void set_tokens(int64_t tokens);             // overrides SessionOptions::tokens_per_step
  // fp16 loss scaling: the scale the step used, and whether the scaler skipped its optimizer
  // step (an inf/NaN gradient). steps.csv loss_scale, step_skipped.
  void set_loss_scale(double scale, bool skipped);
  // Records evals run after this step (eval.csv, eval_ms in steps.csv, the progress log).
  void record_eval(const std::vector<EvalRecord>& evals, double eval_ms);

 private:
  friend class Session;
  Step(Session& session, int64_t number);
  Session& session_;
  int64_t number_;
  int exceptions_;  // std::uncaught_exceptions() at the start: unwinding drops the row
  bool ended_ = false;
};

class Session {
 public:
  // Validates cfg, measures (or takes) the MFU peak, opens a new run directory (never overwrites
  // one) and writes config.yaml and env.json. runtime: what llmprof::train::apply_runtime
  // returned, or null to read the threads in force. Throws ConfigError / IoError.
  Session(const config::Config& cfg, const SessionOptions& options,
          const RuntimeInfo* runtime = nullptr);
  ~Session();  // finishes as "interrupted" when finish() was not called (nothing merged)
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& run_dir() const;
  double peak_flops_per_s() const;

  // Begins the next step (numbered from SessionOptions::first_step) and starts its clock. Throws the IoError of the last
  // step's row when it could not be written.
  Step step();
  int64_t steps_completed() const;

  // Adds a participant to every later step: its hooks are called in the order added (phase ends
  // in the reverse order). Before the first step; the participant outlives the Session.
  // Throws Error after the first step or past PhaseRecorder::kMaxObservers.
  void add_participant(profile::StepParticipant& participant);
  // The same for one that also adds to the run directory (llmprof/rundir/participant.h): told
  // the run directory now, it adds to each step's row, to summary.json at finish() and, spanning
  // processes, merges the run once this process's summary is written (dist::DataParallel). One
  // that names this process as one of several (trace_distributed: a data-parallel rank) makes
  // trace.json (profile.trace at modules/ops) Kineto's trace of that rank: distributedInfo, its
  // events on process id = rank and on rank 0's clock, the first window's collectives from its
  // collectives_between; the trace is then written at finish(), after the run.
  void add_participant(rundir::RunParticipant& participant);
  // Whether any process says yes, or `mine` without a participant that spans processes; `when`
  // names the point in an error (data parallelism: one all-gather, the same answer on every rank).
  bool any_process(bool mine, const char* when);
  // Element-wise sums over every process of the run, in place (data parallelism: an all-reduce).
  void sum_over_processes(std::vector<double>& sums,
                          std::vector<int64_t>& counts,
                          const char* what);
  // A checkpoint's state bytes of this process in, every process's out in rank order (a
  // data-parallel participant gathers them on rank 0; the other ranks get none and write none).
  std::vector<std::string> checkpoint_state(const std::string& mine);

  // summary.json's sections about what the run was made of and came from (data, model,
  // resumed_from, init_from, cuda_graphs, plan): set any of them before finish(). A participant's
  // own section (its finish hook: plan, energy, distributed) is added at finish().
  rundir::RunContext& context();

  // Ends the run: closes the profiler window, asks every participant to finish (their sections
  // of summary.json: energy, the memory plan, a rank's distributed figures), writes summary.json
  // (the status, and why when not completed), lets a participant that spans processes merge the
  // run (data parallelism: a barrier, then rank 0 writes the top directory) and returns the typed
  // results. Called once. A row or table that could not be written makes the status "failed"
  // with that reason; the summary is still written when it can be, then the write error is thrown
  // (IoError) and nothing is merged.
  RunSummary finish(RunStatus status = RunStatus::kCompleted, const std::string& message = "");
  // Whether finish() was called (it may have thrown).
  bool finished() const;

 private:
  friend class Step;
  struct Impl;
  void begin_step(int64_t number);
  void end_step();
  void commit_step(int64_t number);
  void abandon_step();
  void fail_step(std::exception_ptr error) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmprof::train
