// Session and Step: the one instrumented step of llmprof (llmprof/train/session.h). The Session
// owns the run directory and every source that measures into it; the caller's loop owns the
// model, the data and the optimizer.
#include "llmprof/train/session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>

#include "deep_profile.h"
#include "energy_participant.h"
#include "llmprof/base/clock.h"
#include "llmprof/config/config.h"
#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/gpu/activity_source.h"
#include "llmprof/gpu/event_pool.h"
#include "llmprof/output/log.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/profile/nvtx.h"
#include "llmprof/profile/stats.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/participant.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/rundir/tables.h"
#include "llmprof/telemetry/rusage.h"
#include "llmprof/device/context.h"
#include "llmprof/train/env.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/trainer.h"
#include "progress.h"
#include "step_row.h"
#include "summary.h"

namespace llmprof::train {

using device::DeviceContext;
using device::PeakBytes;
using device::PeakFlops;

const char* run_status_name(RunStatus status) {
  return config::name(status).data();  // the table's names are string literals
}

namespace {

profile::ScopeFlops scope_flops_of(const SessionOptions& o) {
  profile::ScopeFlops f;
  f.fill(-1);
  for (const auto& [name, flops] : o.scope_forward_flops) {
    f[static_cast<size_t>(profile::register_scope(name))] = flops;
  }
  return f;
}

PeakFlops peak_of(const config::Config& cfg, const DeviceContext& device) {
  if (cfg.profile.peak_flops_per_s > 0) {
    return {cfg.profile.peak_flops_per_s, "configured", "profile.peak_flops_per_s"};
  }
  return device.peak_flops(cfg.train.precision);
}

// Measured only where the roofline needs it (ops level): 3 GiB of arrays and ~2 s.
PeakBytes peak_bytes_of(const config::Config& cfg, const DeviceContext& device) {
  if (cfg.profile.peak_bytes_per_s > 0) {
    return {cfg.profile.peak_bytes_per_s, 0, "configured", "profile.peak_bytes_per_s"};
  }
  if (cfg.profile.level < profile::Level::kOps) {
    return {0, 0, "none",
            "measured at profile.level=ops (the roofline); or set profile.peak_bytes_per_s"};
  }
  return device.peak_bytes();
}

// The message of a stored exception.
std::string error_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

// The GPU activity of the recorded windows at level ops: the caller's source, or the device's
// (CUPTI on a CUDA device where this build and host have it).
std::unique_ptr<gpu::ActivitySource> gpu_source_of(const config::Config& cfg,
                                                   const SessionOptions& o,
                                                   const DeviceContext& device) {
  if (cfg.profile.level < profile::Level::kOps) return nullptr;
  if (o.gpu_activity) return o.gpu_activity();
  return device.activity_source();
}

// The modules/ops profiler of profile.level=modules|ops; null below.
std::unique_ptr<DeepProfile> deep_profile_of(const config::Config& cfg,
                                             const SessionOptions& o,
                                             const DeviceContext& device,
                                             const profile::Roofs& roofs,
                                             const std::string& run_dir) {
  if (cfg.profile.level < profile::Level::kModules) return nullptr;
  return std::make_unique<DeepProfile>(cfg, scope_flops_of(o), roofs, run_dir, o.flops_per_step,
                                       gpu_source_of(cfg, o, device), o.first_step);
}

RuntimeInfo runtime_in_force() {
  RuntimeInfo r;
  r.threads = at::get_num_threads();
  r.blas_libraries = mapped_blas_libraries();
  return r;
}

}  // namespace

struct Session::Impl {
  Impl(const config::Config& c, const SessionOptions& o, const RuntimeInfo& rt)
      : cfg(c),
        opts(o),
        runtime(rt),
        max_steps(o.max_steps > 0 ? o.max_steps : c.schedule.max_steps),
        device(DeviceContext::make(c)),
        peak(peak_of(c, *device)),
        bandwidth(peak_bytes_of(c, *device)),
        clock_read_ns(profile::measure_clock_read_ns()),
        run_dir(output::create_run_dir(
            o.output_dir.empty() ? c.output.dir : o.output_dir, c.output.name, o.run_label)),
        log_file(rundir::path(run_dir, rundir::kLog)),
        steps_csv(rundir::path(run_dir, rundir::kSteps)),
        eval_csv(rundir::path(run_dir, rundir::kEval)),
        recorder(c.profile.level >= profile::Level::kPhases),
        deep(deep_profile_of(c, o, *device, {peak.flops_per_s, bandwidth.bytes_per_s}, run_dir)),
        progress(max_steps, o.quiet) {}

  // Adds log.txt to the log for the Session's life.
  struct LogFile {
    explicit LogFile(const std::string& path) { output::add_log_file(path); }
    ~LogFile() { output::remove_log_file(); }
  };

  config::Config cfg;
  SessionOptions opts;
  RuntimeInfo runtime;
  int64_t max_steps;
  // The CPU, or the CUDA device and its allocator: made first, the peaks are measured on it.
  std::unique_ptr<DeviceContext> device;
  PeakFlops peak;
  PeakBytes bandwidth;
  double clock_read_ns;
  std::string run_dir;
  LogFile log_file;
  rundir::StepsWriter steps_csv;
  rundir::EvalWriter eval_csv;
  std::unique_ptr<EnergyParticipant> energy;  // energy.enabled: the first participant
  profile::PhaseRecorder recorder;
  // CUDA: the step's device time (every level) and each phase's (level >= phases), from events
  // on the default stream.
  std::unique_ptr<gpu::EventApi> event_api;
  std::unique_ptr<gpu::StepEventSpan> span;
  std::unique_ptr<gpu::PhaseEventPool> events;
  // profile.level=modules|ops: modules/ops on the schedule, the first participant (null below).
  std::unique_ptr<DeepProfile> deep;
  Progress progress;
  std::vector<StepRow> rows;
  std::vector<EvalPoint> evals;
  StepRow row;       // the step in flight
  // Told of every step and phase, in the order added (add_participant): the deep profile, energy,
  // then the caller's. Those that add to the run directory are in both lists.
  std::vector<profile::StepParticipant*> participants;
  std::vector<rundir::RunParticipant*> run_participants;
  telemetry::RusageSnapshot rusage_before;
  bool in_step = false;
  int64_t wall_start_ns = 0;
  rundir::RunContext context;
  bool finished = false;
  bool merge = true;  // not when the destructor finishes: it must not wait for other processes
  bool trace_named = false;  // a participant named this process in trace.json (the first does)

  // The end of the run: what its participants are told, their sections, summary.json's figures
  // and the typed results. Errors of a table written now are kept in write_error.
  rundir::RunEnd run_end(RunStatus status, const std::string& message) const;
  rundir::RunFigures finish_participants(const rundir::RunEnd& end, std::exception_ptr& error);
  rundir::Summary compose_summary(const rundir::RunEnd& end, const rundir::RunFigures& f) const;
  RunSummary typed_result(const rundir::RunEnd& end, rundir::Summary& summary) const;
  void merge_processes(const rundir::RunEnd& end, RunSummary& r);
  std::exception_ptr write_error;  // the first row that could not be written (disk full)
};

Session::Session(const config::Config& cfg, const SessionOptions& options,
                 const RuntimeInfo* runtime) {
  config::validate(cfg);
  if (cfg.profile.nvtx && !profile::nvtx::available()) {
    throw ConfigError("profile.nvtx: true, but this llmprof was built without the NVTX3 headers "
                      "(the CUDA toolkit's include/nvtx3): set profile.nvtx=false",
                      cfg.source_file, "profile.nvtx");
  }
  impl_ = std::make_unique<Impl>(cfg, options, runtime ? *runtime : runtime_in_force());
  profile::nvtx::set_enabled(cfg.profile.nvtx);  // process-wide, until this session ends
  Impl& m = *impl_;
  output::write_file_atomic(rundir::path(m.run_dir, rundir::kConfig), config::to_yaml(cfg));
  if (cfg.energy.enabled) m.energy = std::make_unique<EnergyParticipant>(cfg.energy);
  TrainOptions env_opts;
  env_opts.command_line = options.command_line;
  rundir::Env env = collect_env(cfg, m.runtime, m.peak, m.bandwidth, env_opts);
  telemetry::EnergyAvailability energy_off;
  energy_off.reason = "energy.enabled=false";
  env.energy = m.energy ? m.energy->availability() : energy_off;
  rundir::write_env(rundir::path(m.run_dir, rundir::kEnv), env);
  m.rows.reserve(static_cast<size_t>(m.max_steps));
  if (m.deep) add_participant(*m.deep);  // first: its tracer's phases enclose the others'
  if (m.energy) {  // it observes no phase: no observer slot
    m.participants.push_back(m.energy.get());
    m.run_participants.push_back(m.energy.get());
  }
  m.event_api = m.device->event_api();  // CUDA's on LibTorch's default stream; none on the CPU
  if (m.event_api) {
    m.span = std::make_unique<gpu::StepEventSpan>(*m.event_api);
    if (m.recorder.enabled()) {
      m.events = std::make_unique<gpu::PhaseEventPool>(*m.event_api,
                                                       profile::StepRecord::kMaxIntervals);
      m.recorder.set_device_timer(m.events.get());
    }
  }

  spdlog::info("run directory {}", m.run_dir);
  for (const std::string& note : cfg.notes) spdlog::warn("config: {}", note);
  if (!options.model_description.empty()) {
    spdlog::info("model: {}, {} parameters; task {}, {}, {} threads", options.model_description,
                 options.parameters, task_label(options.task), config::name(cfg.train.precision),
                 m.runtime.threads);
  }
  spdlog::info("blas: {} ({}); peak {:.1f} GFLOP/s ({}: {})", m.runtime.blas_config,
               m.runtime.blas_parallel, m.peak.flops_per_s * 1e-9, m.peak.source, m.peak.method);
  if (m.bandwidth.bytes_per_s > 0) {
    spdlog::info("memory bandwidth {:.1f} GB/s ({}: {})", m.bandwidth.bytes_per_s * 1e-9,
                 m.bandwidth.source, m.bandwidth.method);
  }
  if (m.energy) {
    for (const auto& line : m.energy->availability_lines()) spdlog::info("{}", line);
    m.energy->start();  // its first sample precedes the run's start
  }
  m.wall_start_ns = now_ns();
}

Session::~Session() {
  if (impl_ && !impl_->finished) {
    try {
      impl_->merge = false;
      finish(RunStatus::kInterrupted, "the session ended without finish()");
    } catch (...) {  // a destructor must not throw; the run directory keeps its rows
    }
  }
  if (impl_ && impl_->cfg.profile.nvtx) profile::nvtx::set_enabled(false);
}

const std::string& Session::run_dir() const { return impl_->run_dir; }
double Session::peak_flops_per_s() const { return impl_->peak.flops_per_s; }
int64_t Session::steps_completed() const { return static_cast<int64_t>(impl_->rows.size()); }

bool Session::finished() const { return impl_->finished; }

Step Session::step() {
  if (impl_->write_error) std::rethrow_exception(impl_->write_error);
  if (impl_->in_step) throw Error("llmprof::Session::step: the previous Step is still open");
  if (impl_->finished) throw Error("llmprof::Session::step: the session is finished");
  const int64_t number = impl_->opts.first_step + steps_completed();
  return Step(*this, number);
}

void Session::add_participant(rundir::RunParticipant& participant) {
  add_participant(static_cast<profile::StepParticipant&>(participant));
  impl_->run_participants.push_back(&participant);
  participant.on_added(impl_->run_dir);
  // One process of several: trace.json names it and holds its collectives.
  if (!impl_->deep || impl_->trace_named) return;
  if (std::optional<rundir::TraceDistributed> info = participant.trace_distributed()) {
    impl_->deep->set_distributed(*info, participant);
    impl_->trace_named = true;
  }
}

void Session::add_participant(profile::StepParticipant& participant) {
  Impl& m = *impl_;
  if (m.in_step || steps_completed() > 0 || m.finished) {
    throw Error(
        fmt::format("llmprof::Session::add_participant: {} comes after the first step; "
                    "add every participant before it",
                    participant.name()));
  }
  if (!m.recorder.add_observer(&participant)) {
    throw Error(
        fmt::format("llmprof::Session::add_participant: {}: a session takes at most {} "
                    "phase observers",
                    participant.name(), profile::PhaseRecorder::kMaxObservers));
  }
  m.participants.push_back(&participant);
}

bool Session::any_process(bool mine, const char* when) {
  bool any = mine;
  for (profile::StepParticipant* p : impl_->participants) any = p->any_process(mine, when) || any;
  return any;
}

void Session::sum_over_processes(std::vector<double>& sums,
                                 std::vector<int64_t>& counts,
                                 const char* what) {
  for (profile::StepParticipant* p : impl_->participants) p->sum_over_processes(sums, counts, what);
}

std::vector<std::string> Session::checkpoint_state(const std::string& mine) {
  for (profile::StepParticipant* p : impl_->participants) {
    std::vector<std::string> all = p->checkpoint_state(mine);
    if (all.size() != 1 || all[0] != mine) return all;  // gathered (or none on this rank)
  }
  return {mine};
}

rundir::RunContext& Session::context() { return impl_->context; }

// ---------------------------------------------------------------------------------------------
// A step: begin (between steps), the caller's timed phases, end, then the row.

void Session::begin_step(int64_t number) {
  Impl& m = *impl_;
  m.in_step = true;
  m.row = StepRow{};
  m.row.tokens = m.opts.tokens_per_step;
  m.row.grad_norm = NAN;  // unknown until set_grad_norm
  for (profile::StepParticipant* p : m.participants) p->before_step(number);
  m.device->reset_peak_memory();  // CUDA: the step's own peak (a host call, no sync)
  if (m.events) m.events->begin_step();
  m.rusage_before = telemetry::read_rusage();
  if (m.span) m.span->begin();
  if (profile::nvtx::enabled()) profile::nvtx::push("step", number);
  m.recorder.begin_step(number);  // the step's clock starts: nothing of ours runs until end
}

void Session::end_step() {
  Impl& m = *impl_;
  if (m.span) m.span->end();
  m.recorder.end_step();
  if (profile::nvtx::enabled()) profile::nvtx::pop();
  // ---- end of the timed step ----
  StepRow& row = m.row;
  row.rusage = telemetry::rusage_delta(m.rusage_before, telemetry::read_rusage());
  row.device_memory = m.device->memory();  // the allocator's books: host-side, no sync
  row.timing = m.recorder.record();
  row.timing.max_rss_bytes = row.rusage.max_rss_bytes;
  for (profile::StepParticipant* p : m.participants) p->after_step(row.timing);
  row.phases_timed = m.recorder.enabled();
  row.flops = m.opts.flops_per_step;
  row.peak_flops_per_s = m.peak.flops_per_s;
}

void Session::abandon_step() { impl_->in_step = false; }

void Session::fail_step(std::exception_ptr error) noexcept {
  impl_->in_step = false;
  if (!impl_->write_error) impl_->write_error = std::move(error);
}

void Session::commit_step(int64_t number) {
  Impl& m = *impl_;
  StepRow& row = m.row;
  // sync: waits for the step's end event (recorded after its last phase's). llmprof train has
  // read the loss by now, so the device is already done; a loop that reads nothing waits here,
  // after its timed step.
  if (m.span) {
    const std::optional<double> span_ms = m.span->resolve();
    row.gpu = m.events ? m.events->resolve() : gpu::GpuPhaseTimes{};
    row.gpu->step_ms = span_ms;
  }
  // On CUDA the step lasts until the device is done with it (the host may be far ahead: a CUDA
  // graph's step is 0.3 ms on the host for 40 on the device).
  int64_t end_ns = row.timing.end_ns;
  if (const std::optional<double> device_ms = gpu_step_ms(row)) {
    end_ns = std::max(end_ns, row.timing.start_ns + static_cast<int64_t>(*device_ms * 1e6));
  }
  rundir::StepRow file = file_row(row);
  for (rundir::RunParticipant* p : m.run_participants) p->add_to_row(row.timing, end_ns, file);
  m.steps_csv.write(file);
  m.rows.push_back(row);
  const double ms = step_ms(row);
  m.progress.step(number, row.loss, ms, static_cast<double>(row.tokens) / (ms * 1e-3));
  m.in_step = false;
}

Step::Step(Session& session, int64_t number)
    : session_(session), number_(number), exceptions_(std::uncaught_exceptions()) {
  session_.begin_step(number_);
}

Step::~Step() {
  // A destructor must not throw (it would end the process): an error writing the row is kept by
  // the Session, which throws it from the next step() and reports it in finish().
  try {
    end();
    if (std::uncaught_exceptions() > exceptions_) {
      session_.abandon_step();
      return;
    }
    session_.commit_step(number_);
  } catch (...) {
    session_.fail_step(std::current_exception());
  }
}

PhaseScope Step::phase(profile::Phase phase) {
  return PhaseScope(session_.impl_->recorder, phase);
}

void Step::backward(const at::Tensor& loss, bool sync) {
  const std::vector<profile::StepParticipant*>& all = session_.impl_->participants;
  for (profile::StepParticipant* p : all) p->before_backward(loss, sync);
  try {
    loss.backward();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    for (profile::StepParticipant* p : all) p->on_backward_error(e);  // may throw its diagnosis
    throw;
  }
}

profile::StepDecision Step::agree(bool stop_requested) {
  end();
  const StepRow& row = session_.impl_->row;
  const profile::StepOutcome mine{number_, step_ms(row), row.loss, stop_requested};
  profile::StepDecision decision;
  for (profile::StepParticipant* p : session_.impl_->participants) {
    const profile::StepDecision d = p->after_optimizer(mine);  // each is asked: collectives
    if (d.stop && !decision.stop) decision = d;
  }
  return decision;
}

void Step::end() {
  if (ended_) return;
  ended_ = true;
  session_.end_step();
}

void Step::set_loss(double loss) { session_.impl_->row.loss = loss; }
void Step::set_lr(double lr) { session_.impl_->row.lr = lr; }
void Step::set_grad_norm(double norm) { session_.impl_->row.grad_norm = norm; }
void Step::set_tokens(int64_t tokens) { session_.impl_->row.tokens = tokens; }
void Step::set_loss_scale(double scale, bool skipped) {
  session_.impl_->row.loss_scale = scale;
  session_.impl_->row.step_skipped = skipped;
}

void Step::record_eval(const std::vector<EvalRecord>& evals, double eval_ms) {
  Session::Impl& m = *session_.impl_;
  EvalPoint point{number_, NAN, NAN, eval_ms, std::nullopt, std::nullopt};
  for (const EvalRecord& e : evals) {
    m.eval_csv.write({number_, e.split, e.loss, std::exp(e.loss), e.accuracy, eval_ms});
    if (e.split == "train") {
      point.train_loss = e.loss;
      point.train_accuracy = e.accuracy;
    } else if (e.split == "val") {
      point.val_loss = e.loss;
      point.val_accuracy = e.accuracy;
    }
  }
  m.row.eval_ms = eval_ms;
  m.evals.push_back(point);
  m.progress.eval(number_, point.train_loss, point.val_loss, eval_ms);
}

// ---------------------------------------------------------------------------------------------
// The end of the run: the participants finish, summary.json, then a run of several processes is
// merged.

rundir::RunEnd Session::Impl::run_end(RunStatus status, const std::string& message) const {
  rundir::RunEnd end;
  end.run_dir = run_dir;
  end.status = status;
  end.message = message;
  end.steps = static_cast<int64_t>(rows.size());
  for (const StepRow& r : rows) end.tokens += r.tokens;
  end.flops = opts.flops_per_step * static_cast<double>(rows.size());
  end.start_ns = wall_start_ns;
  end.end_ns = now_ns();
  return end;
}

// Every participant's sections, in the order added; one that fails leaves the others to finish.
rundir::RunFigures Session::Impl::finish_participants(const rundir::RunEnd& end,
                                                      std::exception_ptr& error) {
  rundir::RunFigures all;
  for (rundir::RunParticipant* p : run_participants) {
    rundir::RunFigures f;
    try {
      f = p->finish(end);
    } catch (const Error&) {
      if (!error) error = std::current_exception();
    } catch (const std::exception& e) {  // LibTorch's: the run is failed, its summary written
      const Error named(fmt::format("{}: {}", p->name(), e.what()));
      if (!error) error = std::make_exception_ptr(named);
    }
    if (f.energy) all.energy = std::move(f.energy);
    if (f.plan) all.plan = std::move(f.plan);
    if (f.distributed) all.distributed = std::move(f.distributed);
    if (f.deep) all.deep = std::move(f.deep);
  }
  return all;
}

rundir::Summary Session::Impl::compose_summary(const rundir::RunEnd& end,
                                               const rundir::RunFigures& f) const {
  SummaryInputs in;
  in.status = end.status;
  in.message = end.message;
  in.level = cfg.profile.level;
  in.max_steps = max_steps;
  in.samples_per_step = opts.samples_per_step;
  in.warmup_steps = cfg.profile.warmup_steps;
  in.rows = &rows;
  in.evals = &evals;
  in.peak = peak;
  in.clock_read_ns = clock_read_ns;
  in.parameters = opts.parameters;
  in.flops_per_step = opts.flops_per_step;
  in.flops_formula = opts.flops_formula;
  in.task = opts.task;
  in.wall_s = static_cast<double>(end.end_ns - end.start_ns) * 1e-9;
  rundir::Summary summary = build_summary(in);
  summary.config_notes = cfg.notes;
  summary.distributed = f.distributed;
  summary.context = context;
  if (f.plan) summary.context.plan = f.plan;
  summary.energy = f.energy.value_or(telemetry::EnergyFigures{});
  if (!f.energy) {
    summary.energy->reason = energy ? "the energy figures failed at the end (the run's message)"
                                    : "energy.enabled=false";
  }
  if (const std::optional<rundir::DeepProfileFigures>& d = f.deep) {
    summary.modules = d->modules;
    summary.flops->counted = d->counted;
    summary.overhead->deep = d->overhead;
    summary.overhead->trace = d->trace;
    summary.gpu = d->gpu;
  }
  return summary;
}

// The typed results, from the rows (the same statistics summary.json holds); an MFU above 1 is
// warned of, in the summary too.
RunSummary Session::Impl::typed_result(const rundir::RunEnd& end, rundir::Summary& summary) const {
  RunSummary r;
  r.run_dir = run_dir;
  r.status = end.status;
  r.message = end.message;
  r.steps_completed = end.steps;
  if (!rows.empty()) r.final_train_loss = rows.back().loss;
  if (!evals.empty() && std::isfinite(evals.back().val_loss))
    r.final_val_loss = evals.back().val_loss;
  const size_t skip = std::min<size_t>(
      static_cast<size_t>(std::max<int64_t>(0, cfg.profile.warmup_steps)), rows.size());
  std::vector<double> step_ms_values, tokens_per_s, mfu;
  for (size_t i = skip; i < rows.size(); ++i) {
    const double ms = step_ms(rows[i]);
    step_ms_values.push_back(ms);
    tokens_per_s.push_back(static_cast<double>(rows[i].tokens) / (ms * 1e-3));
    if (peak.flops_per_s > 0 && rows[i].flops > 0) {
      mfu.push_back(rows[i].flops / (ms * 1e-3) / peak.flops_per_s);
    }
  }
  if (!step_ms_values.empty()) {
    r.median_step_ms = profile::summarize(step_ms_values).median;
    r.tokens_per_s = profile::summarize(tokens_per_s).median;
    if (!mfu.empty()) r.mfu = profile::summarize(mfu).median;
  }
  if (r.mfu && *r.mfu > 1.0) {
    // More than the peak is impossible: the calibration ran while the cores were busy.
    const std::string warning = fmt::format(
        "MFU {:.0f}% exceeds 100%: the peak ({:.1f} GFLOP/s, {}) was measured on a busy machine; "
        "measure it when idle (llmprof peak) and pass --set profile.peak_flops_per_s=...",
        *r.mfu * 100, peak.flops_per_s * 1e-9, peak.source);
    summary.mfu->warning = warning;
    spdlog::warn("{}", warning);
  }
  if (deep) r.top_ops = deep->top_ops_lines(15);
  if (summary.distributed && summary.distributed->rank) {  // one rank of several
    r.world_size = static_cast<int>(summary.distributed->world_size);
    r.rank_dir = run_dir;
    r.rank_median_step_ms = r.median_step_ms;
    r.rank_tokens_per_s = r.tokens_per_s;
  }
  return r;
}

// Where a participant merged the run at its top directory (data parallelism, rank 0), the run
// is that directory and its figures the whole job's.
void Session::Impl::merge_processes(const rundir::RunEnd& end, RunSummary& r) {
  for (rundir::RunParticipant* p : run_participants) {
    const std::optional<rundir::Summary> merged = p->merge(end);
    if (!merged) continue;
    r.run_dir = merged->run_dir;
    r.median_step_ms = merged->median_step_ms();
    r.tokens_per_s = merged->median_tokens_per_s();
    r.mfu = merged->median_mfu();
    if (merged->final_global_train_loss) r.final_train_loss = merged->final_global_train_loss;
  }
}

RunSummary Session::finish(RunStatus status, const std::string& message) {
  Impl& m = *impl_;
  if (m.finished) throw Error("llmprof::Session::finish: called twice");
  m.finished = true;
  m.progress.finish();
  // The tables written now may meet a full disk too: the summary still says so, where it can.
  std::exception_ptr write_error = m.write_error;
  rundir::RunEnd end = m.run_end(status, message);
  const rundir::RunFigures figures = m.finish_participants(end, write_error);
  if (write_error && status != RunStatus::kDiverged && status != RunStatus::kFailed) {
    end.status = RunStatus::kFailed;
    end.message = error_text(write_error);
  }
  rundir::Summary summary = m.compose_summary(end, figures);
  RunSummary r = m.typed_result(end, summary);
  rundir::write_summary(rundir::path(m.run_dir, rundir::kSummary), summary);
  if (end.status == RunStatus::kCompleted) {
    spdlog::info("completed {} steps", r.steps_completed);
  } else {
    spdlog::error("run {}: {}", run_status_name(end.status), end.message);
  }
  if (write_error) std::rethrow_exception(write_error);
  if (m.merge) m.merge_processes(end, r);  // after every document of this process is written
  return r;
}

}  // namespace llmprof::train
