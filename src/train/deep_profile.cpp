#include "deep_profile.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <unordered_map>
#include <unordered_set>

#include "llmprof/gpu/device_properties.h"
#include "llmprof/gpu/comm_kernels.h"
#include "llmprof/rundir/trace_gpu.h"

#include "llmprof/base/clock.h"
#include "llmprof/rundir/files.h"

namespace llmprof::train {

DeepProfile::DeepProfile(const config::Config& cfg,
                         const profile::ScopeFlops& scope_flops,
                         const profile::Roofs& roofs,
                         std::string run_dir,
                         double analytic_flops_per_step,
                         std::unique_ptr<gpu::ActivitySource> gpu,
                         int64_t first_step)
    : cfg_(cfg.profile),
      first_step_(first_step),
      level_(cfg.profile.level),
      run_dir_(std::move(run_dir)),
      roofs_(roofs),
      analytic_flops_per_step_(analytic_flops_per_step),
      scope_flops_(scope_flops),
      totals_(roofs),
      gpu_(level_ >= profile::Level::kOps ? std::move(gpu) : nullptr),
      device_(static_cast<int>(cfg.device.index)) {
  if (level_ < profile::Level::kModules) return;
  profile::TracerOptions o;
  o.level = level_;
  o.record_shapes = cfg.profile.record_shapes;
  o.record_view_ops = cfg.profile.record_view_ops;
  o.shape_interval = static_cast<int>(cfg.profile.shape_interval);
  o.max_events = static_cast<size_t>(cfg.profile.max_events);
  o.max_scope_events = static_cast<size_t>(cfg.profile.max_events / 4 + 1024);
  o.active_steps = static_cast<size_t>(cfg.profile.schedule_active);
  tracer_ = std::make_unique<profile::Tracer>(o);
}

DeepProfile::~DeepProfile() = default;

// Step numbers count from 1 (docs/guide/training.md, "Step numbers"); the schedule counts from the
// run's first step (a resumed run's first step is its checkpoint's + 1).
DeepProfile::StepKind DeepProfile::kind_of(int64_t step_number) const {
  const int64_t step = step_number - first_step_;
  const int64_t cycle = cfg_.schedule_wait + cfg_.schedule_warmup + cfg_.schedule_active;
  if (cfg_.schedule_repeat > 0 && step / cycle >= cfg_.schedule_repeat) return StepKind::kSkip;
  const int64_t pos = step % cycle;
  if (pos < cfg_.schedule_wait) return StepKind::kSkip;
  if (pos < cfg_.schedule_wait + cfg_.schedule_warmup) return StepKind::kWarmup;
  return StepKind::kActive;
}

bool DeepProfile::last_of_window(int64_t step_number) const {
  const int64_t step = step_number - first_step_;
  const int64_t cycle = cfg_.schedule_wait + cfg_.schedule_warmup + cfg_.schedule_active;
  return step % cycle == cycle - 1;
}

void DeepProfile::before_step(int64_t step) {
  if (!tracer_) return;
  const StepKind kind = kind_of(step);
  if (kind == StepKind::kSkip) return;
  if (!tracer_->recording()) {
    tracer_->start_window();
    if (gpu_) gpu_->start();  // CUPTI on for the window only (off, the program runs at speed)
  }
  tracer_->begin_step(static_cast<int32_t>(step), kind == StepKind::kActive);
  in_step_ = true;
}

void DeepProfile::on_phase_begin(profile::Phase phase) {
  if (in_step_) tracer_->on_phase_begin(phase);
}

void DeepProfile::on_phase_end(profile::Phase phase) {
  if (in_step_) tracer_->on_phase_end(phase);
}

void DeepProfile::after_step(const profile::StepRecord& record) {
  if (!in_step_) return;
  in_step_ = false;
  tracer_->end_step();
  if (kind_of(record.step) == StepKind::kActive) {
    window_records_.push_back(record);
    const auto ms = [&](profile::Phase p) {
      return static_cast<double>(record.phase_ns[static_cast<int>(p)]) * 1e-6;
    };
    window_phases_.push_back({static_cast<int32_t>(record.step), ms(profile::Phase::kForward),
                              ms(profile::Phase::kBackward), record.max_rss_bytes});
  }
  if (last_of_window(record.step)) {
    tracer_->stop_window();
    stop_gpu();
    process();
  }
}

void DeepProfile::stop_gpu() {
  if (!gpu_) return;
  gpu_->stop();
  const int64_t incomplete_before = window_gpu_.incomplete;
  gpu_records_ += static_cast<int64_t>(gpu_->collect(window_gpu_));
  gpu_incomplete_ += window_gpu_.incomplete - incomplete_before;
}

rundir::RunFigures DeepProfile::finish(const rundir::RunEnd& /*end*/) {
  if (!tracer_) return {};
  if (tracer_->recording()) {
    tracer_->stop_window();
    stop_gpu();
    process();
  } else if (!window_records_.empty()) {
    process();
  }
  write_deferred_trace();
  rundir::RunFigures f;
  f.deep = figures();
  return f;
}

void DeepProfile::set_distributed(const rundir::TraceDistributed& info,
                                  const rundir::RunParticipant& collectives) {
  dist_ = info;
  collectives_ = &collectives;
}

void DeepProfile::write_first_trace(profile::TraceData&& data) {
  rundir::TraceOptions options;
  options.extra_events = std::move(gpu_trace_);
  gpu_trace_.clear();
  options.gzip = cfg_.trace_gzip;
  options.distributed = dist_;
  if (gpu_) {
    if (const auto props = gpu::query_device_properties(device_)) {
      options.device_properties_json = "[" + gpu::device_properties_json(*props) + "]";
    }
  }
  if (dist_) {  // its collectives are known once the run has ended: written by finish()
    deferred_ = std::make_unique<DeferredTrace>(
        DeferredTrace{std::move(data), window_records_, std::move(options)});
    return;
  }
  trace_stats_ = rundir::write_trace(
      rundir::path(run_dir_, cfg_.trace_gzip ? rundir::kTraceGz : rundir::kTrace), data,
      window_records_, options);
}

void DeepProfile::write_deferred_trace() {
  if (!deferred_) return;
  std::unique_ptr<DeferredTrace> d = std::move(deferred_);
  if (collectives_ != nullptr && !d->records.empty()) {
    d->options.collectives =
        collectives_->collectives_between(d->records.front().start_ns, d->records.back().end_ns);
  }
  if (deferred_gpu_) {  // kernels launched by a collective's issue carry its args (Kineto's)
    DeferredGpu& g = *deferred_gpu_;
    std::vector<gpu::CollectiveIssue> issues;
    for (const rundir::CollectiveSlice& c : d->options.collectives) {
      issues.push_back({c.start_ns, c.issued_ns, 0});
    }
    const std::vector<int32_t> owner = gpu::collective_of_kernels(g.records, issues);
    g.options.kernel_args.assign(owner.size(), std::string());
    for (size_t k = 0; k < owner.size(); ++k) {
      if (owner[k] < 0) continue;
      g.options.kernel_args[k] =
          rundir::collective_args(d->options.collectives[static_cast<size_t>(owner[k])]);
    }
    d->options.extra_events = rundir::gpu_trace_events(g.records, g.ops, g.correlation, g.options);
    deferred_gpu_.reset();
  }
  trace_stats_ = rundir::write_trace(
      rundir::path(run_dir_, cfg_.trace_gzip ? rundir::kTraceGz : rundir::kTrace), d->data,
      d->records, d->options);
}

// A window closed: its events are added to the totals (and freed), and the tables rewritten
// over every window so far; trace.json holds the first window only (its size would grow with
// the run).
void DeepProfile::process() {
  if (window_records_.empty()) return;
  const int64_t t0 = now_ns();
  profile::TraceData data = tracer_->take_data();
  calibration_ = data.calibration;
  shape_sampling_ = data.shape_sampling;
  view_sampling_ = data.view_sampling;
  memory_reports_ = data.memory_reports;
  if (data.dropped_events > dropped_events_ || data.dropped_scopes > dropped_scopes_) {
    spdlog::warn("profiler buffers full: {} events and {} scopes not recorded; raise "
                 "profile.max_events or shorten profile.schedule_active",
                 data.dropped_events, data.dropped_scopes);
  }
  dropped_events_ = data.dropped_events;  // the tracer's counts are over the run
  dropped_scopes_ = data.dropped_scopes;
  if (gpu_) {
    const std::vector<double> event_gpu_ns = process_gpu(data);
    totals_.add(data, window_phases_, &event_gpu_ns);
  } else {
    totals_.add(data, window_phases_);
  }
  analysis_ = totals_.result(scope_flops_);
  memory_intervals_.insert(memory_intervals_.end(), data.memory.begin(), data.memory.end());
  phases_.insert(phases_.end(), window_phases_.begin(), window_phases_.end());
  rundir::write_modules(rundir::path(run_dir_, rundir::kModules), analysis_);
  rundir::write_activations(rundir::path(run_dir_, rundir::kActivations), analysis_);
  rundir::write_memory(rundir::path(run_dir_, rundir::kMemory), memory_intervals_, phases_);
  if (level_ >= profile::Level::kOps) {
    rundir::write_ops(rundir::path(run_dir_, rundir::kOps), analysis_);
  }
  if (cfg_.trace && windows_ == 0) write_first_trace(std::move(data));
  ++windows_;
  window_records_.clear();
  window_phases_.clear();
  post_processing_ms_ += static_cast<double>(now_ns() - t0) * 1e-6;
  spdlog::info("profiled {} steps: {:.0f} events/step, forward scopes {:.2f} of {:.2f} ms, "
               "backward nodes {:.2f} of {:.2f} ms; written in {:.0f} ms",
               analysis_.n_steps, analysis_.events_per_step, analysis_.forward_scopes_ms,
               analysis_.forward_phase_ms, analysis_.backward_nodes_ms,
               analysis_.backward_phase_ms, post_processing_ms_);
}

namespace {

// Data-parallel traces: host events on pid = rank, GPU n on this pid + n.
constexpr int kDistGpuPidBase = 1000;

// The recorded step each GPU activity belongs to: the step whose host interval holds the start
// of the runtime call that launched it; -1 when its launch is unknown or outside every step.
template <typename Record>
void steps_of(const std::vector<Record>& records, const std::vector<gpu::Attribution>& attrs,
              const gpu::GpuRecords& gpu, const std::vector<profile::StepRecord>& steps,
              std::vector<std::pair<int64_t, int64_t>>& span) {
  for (size_t i = 0; i < records.size() && i < attrs.size(); ++i) {
    if (attrs[i].runtime < 0) continue;
    const int64_t t = gpu.runtime[static_cast<size_t>(attrs[i].runtime)].start_ns;
    for (size_t s = 0; s < steps.size(); ++s) {
      if (t < steps[s].start_ns || t >= steps[s].end_ns) continue;
      span[s].first = std::min(span[s].first, records[i].start_ns);
      span[s].second = std::max(span[s].second, records[i].end_ns);
      break;
    }
  }
}

template <typename Record>
void add_gpu_time(const std::vector<Record>& records, const std::vector<gpu::Attribution>& attrs,
                  std::vector<double>& event_gpu_ns) {
  for (size_t i = 0; i < records.size() && i < attrs.size(); ++i) {
    if (attrs[i].op < 0) continue;
    event_gpu_ns[static_cast<size_t>(attrs[i].op)] +=
        static_cast<double>(records[i].end_ns - records[i].start_ns);
  }
}

// Keeps the activity launched during the recorded steps: the window also ran warm-up steps
// (traced, then discarded) whose work would count as unattributed. Work without a launch record
// is kept when it starts after the first recorded step does.
void keep_recorded_steps(gpu::GpuRecords& g, const std::vector<profile::StepRecord>& steps) {
  if (steps.empty()) return;
  const auto in_steps = [&](int64_t t) {
    for (const profile::StepRecord& s : steps) {
      if (t >= s.start_ns && t < s.end_ns) return true;
    }
    return false;
  };
  std::unordered_set<uint32_t> launched, dropped;
  std::vector<gpu::RuntimeApiRecord> runtime;
  for (gpu::RuntimeApiRecord& r : g.runtime) {
    if (in_steps(r.start_ns)) {
      launched.insert(r.correlation_id);
      runtime.push_back(std::move(r));
    } else {
      dropped.insert(r.correlation_id);
    }
  }
  g.runtime = std::move(runtime);
  const int64_t first = steps.front().start_ns;
  const auto keep = [&](auto& records) {
    auto& v = records;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [&](const auto& a) {
                             if (launched.count(a.correlation_id) != 0) return false;
                             return dropped.count(a.correlation_id) != 0 || a.start_ns < first;
                           }),
            v.end());
  };
  keep(g.kernels);
  keep(g.memcpys);
  keep(g.memsets);
  keep(g.syncs);
}

}  // namespace

namespace {

// Backward ops take the module scope of their autograd node's forward op (the node's sequence
// number is the forward op's, in the same step), as modules.csv attributes backward time: each
// op in the backward phase looks up the innermost node open around it on its thread.
void attribute_backward_scopes(const profile::TraceData& data, std::vector<gpu::CpuOpInterval>& ops) {
  const auto key = [](int64_t step, int64_t seq) { return (step << 32) ^ seq; };
  std::unordered_map<int64_t, size_t> creator;  // (step, seq) -> the forward op
  std::unordered_map<uint32_t, std::vector<size_t>> nodes;  // thread -> its nodes, by start
  for (size_t i = 0; i < data.ops.size(); ++i) {
    const profile::OpEvent& e = data.ops[i];
    if (e.kind == profile::OpEvent::kBackwardNode) {
      nodes[e.thread].push_back(i);
    } else if (e.seq >= 0 && e.phase == static_cast<uint8_t>(profile::Phase::kForward) &&
               !ops[i].scope.empty()) {
      creator[key(e.step, e.seq)] = i;
    }
  }
  for (auto& [thread, list] : nodes) {
    std::sort(list.begin(), list.end(),
              [&](size_t a, size_t b) { return data.ops[a].start_ns < data.ops[b].start_ns; });
  }
  for (size_t i = 0; i < data.ops.size(); ++i) {
    const profile::OpEvent& e = data.ops[i];
    if (e.phase != static_cast<uint8_t>(profile::Phase::kBackward) || !ops[i].scope.empty()) {
      continue;
    }
    const auto it = nodes.find(e.thread);
    if (it == nodes.end()) continue;
    const std::vector<size_t>& list = it->second;
    // The last node starting at or before the op, then outwards until one contains it.
    auto pos = std::upper_bound(list.begin(), list.end(), e.start_ns, [&](int64_t t, size_t n) {
      return t < data.ops[n].start_ns;
    });
    while (pos != list.begin()) {
      const profile::OpEvent& node = data.ops[*--pos];
      if (node.end_ns < e.end_ns) continue;  // ended before the op: not around it
      const auto f = node.seq >= 0 ? creator.find(key(node.step, node.seq)) : creator.end();
      if (f != creator.end()) {
        ops[i].scope = ops[f->second].scope;
        ops[i].block = ops[f->second].block;
      }
      break;
    }
  }
  // The nodes themselves, for the kernels they launch directly.
  for (const auto& [thread, list] : nodes) {
    for (size_t n : list) {
      const profile::OpEvent& node = data.ops[n];
      const auto f = node.seq >= 0 ? creator.find(key(node.step, node.seq)) : creator.end();
      if (f != creator.end() && ops[n].scope.empty()) {
        ops[n].scope = ops[f->second].scope;
        ops[n].block = ops[f->second].block;
      }
    }
  }
}

}  // namespace

std::vector<double> DeepProfile::process_gpu(const profile::TraceData& data) {
  // The op events as intervals on their OS threads, index for index with data.ops.
  std::vector<gpu::CpuOpInterval> ops;
  ops.reserve(data.ops.size());
  for (const profile::OpEvent& e : data.ops) {
    gpu::CpuOpInterval o;
    o.name = data.names[e.name_id];
    o.start_ns = e.start_ns;
    o.end_ns = e.end_ns;
    o.thread = e.thread < data.thread_ids.size() ? data.thread_ids[e.thread] : 0;
    if (e.scope_event >= 0 && static_cast<size_t>(e.scope_event) < data.scopes.size()) {
      const profile::ScopeEvent& se = data.scopes[static_cast<size_t>(e.scope_event)];
      o.scope = std::string(profile::scope_name(static_cast<profile::Scope>(se.scope)));
      o.block = se.block;
      o.pass = se.pass == 0 ? "forward" : "recompute";
    } else if (e.phase == static_cast<uint8_t>(profile::Phase::kBackward)) {
      o.pass = "backward";  // its module: below, through its autograd node
    }
    ops.push_back(std::move(o));
  }
  attribute_backward_scopes(data, ops);
  keep_recorded_steps(window_gpu_, window_records_);
  const gpu::GpuRecords& g = window_gpu_;
  const gpu::Correlation corr = gpu::correlate(g, ops);
  if (cfg_.trace && windows_ == 0) {  // trace.json holds the first window: its GPU events too
    rundir::GpuTraceOptions t;
    t.origin_ns = rundir::trace_origin_ns(data, window_records_, dist_);
    t.cpu_pid = dist_ ? dist_->rank : static_cast<int64_t>(::getpid());
    for (size_t i = 0; i < data.thread_ids.size(); ++i) {
      t.cpu_tids.emplace(data.thread_ids[i], static_cast<int>(i) + 1);
    }
    if (dist_) {  // rendered after the run, when the collectives are known
      t.gpu_pid_base = kDistGpuPidBase;  // pid = rank is the host's
      deferred_gpu_ = std::make_unique<DeferredGpu>(DeferredGpu{g, ops, corr, t});
    } else {
      gpu_trace_ = rundir::gpu_trace_events(g, ops, corr, t);
    }
  }
  std::vector<double> event_gpu_ns(ops.size(), 0.0);
  add_gpu_time(g.kernels, corr.kernels, event_gpu_ns);
  add_gpu_time(g.memcpys, corr.memcpys, event_gpu_ns);
  add_gpu_time(g.memsets, corr.memsets, event_gpu_ns);
  gpu_unattributed_ += corr.without_launch + corr.without_op;
  const int n_steps = std::max(1, static_cast<int>(window_records_.size()));
  // kernels.csv over every window so far, rewritten as each one closes (as ops.csv is).
  const gpu::GpuTables window = gpu::aggregate_gpu(g, ops, corr, n_steps);
  gpu_tables_ = windows_ == 0 ? window : gpu::merge_gpu_tables(gpu_tables_, window);
  rundir::write_kernels(rundir::path(run_dir_, rundir::kKernels), gpu_tables_);
  // Each step's window on the device: from the end of the previous step's work (or the start of
  // its own, for the first) to the end of its own work, the work found by its launch time.
  std::vector<std::pair<int64_t, int64_t>> span(window_records_.size(),
                                                {INT64_MAX, INT64_MIN});
  steps_of(g.kernels, corr.kernels, g, window_records_, span);
  steps_of(g.memcpys, corr.memcpys, g, window_records_, span);
  steps_of(g.memsets, corr.memsets, g, window_records_, span);
  int64_t previous_end = INT64_MIN;
  for (size_t s = 0; s < window_records_.size(); ++s) {
    const profile::StepRecord& r = window_records_[s];
    if (span[s].first > span[s].second) continue;  // no work of this step was seen
    const int64_t start = previous_end != INT64_MIN ? previous_end : span[s].first;
    std::vector<gpu::HostInterval> data_phases;
    for (int i = 0; i < r.num_intervals; ++i) {
      const profile::PhaseInterval& p = r.intervals[i];
      if (p.phase == profile::Phase::kData) data_phases.push_back({p.start_ns, p.end_ns});
    }
    gpu::StepIdle idle =
        gpu::analyze_idle(r.step, start, span[s].second, g, data_phases, device_);
    idle.gaps.clear();
    idle_.push_back(std::move(idle));
    previous_end = span[s].second;
  }
  window_gpu_ = gpu::GpuRecords{};
  return event_gpu_ns;
}

std::optional<rundir::DeepProfileFigures> DeepProfile::figures() const {
  if (!tracer_) return std::nullopt;
  rundir::DeepProfileFigures f;
  f.modules = modules_figures();
  f.counted = counted_flops(analytic_flops_per_step_);
  f.overhead = overhead_figures();
  if (trace_stats_.events > 0) {
    f.trace = rundir::TraceCost{1,  // the first recording window only
                                trace_stats_.events, trace_stats_.bytes,
                                static_cast<double>(trace_stats_.bytes) / trace_stats_.events,
                                trace_stats_.write_ms};
  }
  if (gpu_) f.gpu = gpu_figures();
  return f;
}

rundir::ModulesFigures DeepProfile::modules_figures() const {
  const auto& a = analysis_;
  auto frac = [](double part, double whole) {
    return whole > 0 ? std::optional<double>(1.0 - part / whole) : std::nullopt;
  };
  rundir::ModulesFigures m;
  m.recorded_steps = a.n_steps;
  m.windows = windows_;
  m.forward_scopes_ms = a.forward_scopes_ms;
  m.forward_phase_ms = a.forward_phase_ms;
  m.forward_residual_fraction = frac(a.forward_scopes_ms, a.forward_phase_ms);
  m.backward_nodes_ms = a.backward_nodes_ms;
  m.backward_phase_ms = a.backward_phase_ms;
  m.backward_residual_fraction = frac(a.backward_nodes_ms, a.backward_phase_ms);
  m.dropped_events = dropped_events_;
  m.dropped_scopes = dropped_scopes_;
  // ops level: eval passes run between recorded steps (ops.csv during eval)
  if (a.n_evals > 0) m.eval_passes_recorded = a.n_evals;
  const profile::ShapeSampling& ss = shape_sampling_;
  if (ss.read_steps + ss.mapped_steps + ss.unmapped_steps + ss.unconfirmed_steps == 0) return m;
  m.shapes = rundir::ShapeFigures{ss.read_steps,        ss.mapped_steps, ss.unmapped_steps,
                                  ss.unconfirmed_steps, ss.every_step,   cfg_.shape_interval};
  const profile::ViewSampling& vs = view_sampling_;
  rundir::ViewFigures& v = m.views.emplace();
  v.hidden_calls = vs.hidden_calls;
  v.counted_from_read_steps = vs.counted_views;
  v.mapped_steps = vs.mapped_steps;
  v.unconfirmed_steps = vs.unconfirmed_steps;
  v.lost_steps = vs.lost_steps;
  v.how = fmt::format("between the steps that read shapes, RecordFunction is off inside ops "
                      "that ran only view ops in the last read step (at least {} per call); "
                      "their view calls are counted from that step, confirmed by the next "
                      "read step",
                      profile::kMinViewsToHide);
  if (vs.lost_steps > 0) {
    v.note = fmt::format(
        "an undercount: the view calls inside such ops in {} recorded steps are not in ops.csv "
        "(the op sequence or the views changed before the next read step)",
        vs.lost_steps);
  }
  return m;
}

rundir::CountedFlops DeepProfile::counted_flops(double analytic_flops_per_step) const {
  const auto& a = analysis_;
  rundir::CountedFlops c;
  if (!a.counted_matmul_flops) {
    c.note = "FLOPs are counted from op shapes at profile.level=ops";
    return c;
  }
  c.matmul_per_step = *a.counted_matmul_flops;
  c.other_per_step = *a.counted_other_flops;
  c.vs_analytic_ratio = *a.counted_matmul_flops / analytic_flops_per_step;
  if (shape_sampling_.unmapped_steps > 0) {
    c.note = fmt::format(
        "an undercount: {} of {} recorded steps have no op shapes (their op sequence or shapes "
        "changed between the steps that read them), so their ops count no FLOPs or bytes",
        shape_sampling_.unmapped_steps, a.n_steps);
  }
  return c;
}

// Own cost: events x calibrated cost per event + scopes x cost per scope + memory reports x
// cost per report, + in the steps that read shapes every call's argument boxing (estimates).
rundir::DeepOverhead DeepProfile::overhead_figures() const {
  const auto& a = analysis_;
  const profile::TracerCalibration& c = calibration_;
  const profile::ShapeSampling& ss = shape_sampling_;
  const int64_t sampled = ss.read_steps + ss.mapped_steps + ss.unmapped_steps + ss.unconfirmed_steps;
  const double read_fraction = sampled > 0 ? static_cast<double>(ss.read_steps) / sampled : 0.0;
  // View calls inside ops that hid them were counted from the read steps, not observed: they
  // cost nothing, the switching around those ops does.
  const profile::ViewSampling& vs = view_sampling_;
  const double per_step = a.n_steps > 0 ? 1.0 / a.n_steps : 0.0;
  rundir::DeepOverhead d;
  d.untimed_events_observed_per_step =
      std::max(0.0, a.untimed_events_per_step - static_cast<double>(vs.counted_views) * per_step);
  d.hidden_calls_per_step = static_cast<double>(vs.hidden_calls) * per_step;
  d.memory_reports_per_step = static_cast<double>(memory_reports_) * per_step;
  d.estimated_ms_per_recorded_step =
      (a.events_per_step * c.ns_per_event +
       d.untimed_events_observed_per_step * c.ns_per_untimed_event +
       d.hidden_calls_per_step * c.ns_per_hidden_call +
       d.memory_reports_per_step * c.ns_per_memory_report +
       read_fraction * (a.events_per_step + a.untimed_events_per_step) *
           c.ns_per_call_reading_shapes +
       a.scopes_per_step * c.ns_per_scope) * 1e-6;
  // Of that, LibTorch's RecordFunction machinery, paid by every observed call whatever the
  // callback does: the floor of any per-op recording through it.
  d.record_function_ms_per_recorded_step = (a.events_per_step + d.untimed_events_observed_per_step) *
                                           c.ns_per_call_record_function * 1e-6;
  const double recorded_step_ms = a.forward_phase_ms + a.backward_phase_ms;
  if (recorded_step_ms > 0) {
    d.record_function_fraction_of_recorded_step =
        d.record_function_ms_per_recorded_step / recorded_step_ms;
    d.estimated_fraction_of_recorded_step = d.estimated_ms_per_recorded_step / recorded_step_ms;
  }
  d.events_per_step = a.events_per_step;
  d.scopes_per_step = a.scopes_per_step;
  d.ns_per_event = c.ns_per_event;
  d.ns_per_call_record_function = c.ns_per_call_record_function;
  d.untimed_events_per_step = a.untimed_events_per_step;
  d.ns_per_untimed_event = c.ns_per_untimed_event;
  d.ns_per_hidden_call = c.ns_per_hidden_call;
  d.ns_per_memory_report = c.ns_per_memory_report;
  d.ns_per_scope = c.ns_per_scope;
  d.ns_per_call_reading_shapes = c.ns_per_call_reading_shapes;
  d.shape_read_fraction = read_fraction;
  d.post_processing_ms = post_processing_ms_;
  return d;
}

rundir::GpuFigures DeepProfile::gpu_figures() const {
  rundir::GpuFigures g;
  g.records = gpu_records_;
  g.dropped_records = gpu_->dropped_records();
  g.incomplete_records = gpu_incomplete_;
  g.unattributed_activities = gpu_unattributed_;
  g.kernel_ms_per_step = gpu_tables_.kernel_ms;
  g.memcpy_ms_per_step = gpu_tables_.memcpy_ms;
  g.memset_ms_per_step = gpu_tables_.memset_ms;
  g.kernels_window =
      fmt::format("every recorded window ({} steps; kernels.csv)", gpu_tables_.n_steps);
  g.launched_by_ops_ms_per_step = analysis_.gpu_ms;
  g.outside_scopes_ms_per_step = analysis_.gpu_ms_outside_scopes;
  if (idle_.empty()) {
    g.idle.reason = "no GPU work was seen in the recorded steps";
    return g;
  }
  double window = 0, busy = 0, host = 0, data = 0, sync = 0;
  for (const gpu::StepIdle& i : idle_) {
    window += i.window_ms;
    busy += i.busy_ms;
    host += i.host_bound_ms;
    data += i.data_bound_ms;
    sync += i.sync_bound_ms;
  }
  const double k = 1.0 / static_cast<double>(idle_.size());
  g.idle.steps = static_cast<int64_t>(idle_.size());
  g.idle.window_ms = window * k;
  g.idle.busy_ms = busy * k;
  g.idle.idle_ms = (window - busy) * k;
  if (window > 0) g.idle.busy_fraction = busy / window;
  g.idle.host_bound_ms = host * k;
  g.idle.data_bound_ms = data * k;
  g.idle.sync_bound_ms = sync * k;
  return g;
}

std::vector<std::string> DeepProfile::top_ops_lines(size_t n) const {
  std::vector<std::string> lines;
  if (analysis_.ops.empty()) return lines;
  lines.push_back(fmt::format("{:<44} {:>8} {:>10} {:>10} {:>7} {:>10}", "op (per step)", "calls",
                              "self ms", "total ms", "self%", "GFLOP/s"));
  for (size_t i = 0; i < analysis_.ops.size() && i < n; ++i) {
    const auto& r = analysis_.ops[i];
    lines.push_back(fmt::format("{:<44} {:>8.1f} {:>10.3f} {:>10.3f} {:>6.1f}% {:>10}", r.op,
                                r.calls, r.self_ms, r.total_ms, r.self_share * 100,
                                r.roofline.achieved_gflops_per_s
                                    ? fmt::format("{:.1f}", *r.roofline.achieved_gflops_per_s)
                                    : "-"));
  }
  return lines;
}

}  // namespace llmprof::train
