#include "summary.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>

#include "llmprof/profile/stats.h"
#include "llmprof/rundir/files.h"

namespace llmprof::train {

namespace {

std::optional<rundir::Stats> stats_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return profile::summarize(values);
}

// What summary.json's perplexities are the exp of; a custom loop's loss is read as classification.
const char* perplexity_note(const std::optional<config::TaskKind>& task) {
  if (task == config::TaskKind::kMlm) return "exp of the mean cross-entropy of the masked tokens";
  if (task == config::TaskKind::kLm) return "exp of the mean next-token cross-entropy";
  return "exp of the mean classification cross-entropy";
}

rundir::TimingFigures timing_figures(const std::vector<double>& step,
                                     const std::vector<double> (&phase)[4],
                                     int64_t done,
                                     int64_t warmup_steps) {
  rundir::TimingFigures t;
  t.step_ms = stats_of(step);
  t.data_ms = stats_of(phase[0]);
  t.forward_ms = stats_of(phase[1]);
  t.backward_ms = stats_of(phase[2]);
  t.optimizer_ms = stats_of(phase[3]);
  if (step.empty()) {
    t.note = fmt::format("no measured steps: all {} completed steps were warm-up "
                         "(profile.warmup_steps={})", done, warmup_steps);
  } else if (phase[0].empty() && phase[1].empty() && phase[2].empty() && phase[3].empty()) {
    t.note = "phases not timed at profile.level=off";
  } else {
    // Reconciliation: phases should add up to the step; the rest is loop bookkeeping.
    double phase_sum = 0;
    for (int p = 0; p < 4; ++p) phase_sum += median(phase[p]).value_or(0.0);
    t.phase_sum_median_ms = phase_sum;
    t.unattributed_median_ms = *median(step) - phase_sum;
  }
  return t;
}

rundir::LossFigures loss_figures(const std::optional<config::TaskKind>& task,
                                 const std::vector<StepRow>& rows,
                                 const std::vector<EvalPoint>& evals) {
  rundir::LossFigures l;
  l.task = task_label(task);
  l.perplexity_note = perplexity_note(task);
  if (!rows.empty()) l.final_train_step_loss = rows.back().loss;
  if (evals.empty()) {
    l.note = "no eval ran (train.eval_interval=0 or the run stopped first)";
    return l;
  }
  const EvalPoint& e = evals.back();
  rundir::EvalLoss& out = l.eval.emplace();
  out.step = e.step;
  out.train_loss = e.train_loss;
  out.val_loss = e.val_loss;
  out.train_perplexity = std::exp(e.train_loss);
  out.val_perplexity = std::exp(e.val_loss);
  out.train_accuracy = e.train_accuracy;
  out.val_accuracy = e.val_accuracy;
  if (!e.val_accuracy) out.accuracy_note = "accuracy is reported for train.task=classify";
  return l;
}

}  // namespace

std::string task_label(const std::optional<config::TaskKind>& task) {
  return task ? std::string(config::name(*task)) : "custom";
}

rundir::Summary build_summary(const SummaryInputs& in) {
  const auto& rows = *in.rows;
  const int64_t done = static_cast<int64_t>(rows.size());
  const int64_t skip = std::min<int64_t>(in.warmup_steps, done);
  std::vector<double> step, phase[4], tok_s, samples_s, flops_s, mfu, faults, invol, cpu;
  for (int64_t i = skip; i < done; ++i) {
    const StepRow& r = rows[i];
    const double ms = step_ms(r);
    step.push_back(ms);
    if (r.phases_timed) {
      for (int p = 0; p < 4; ++p) {
        if (r.timing.phase_ns[p] > 0) {  // a loop without this phase leaves it unknown
          phase[p].push_back(static_cast<double>(r.timing.phase_ns[p]) * 1e-6);
        }
      }
    }
    // 0 tokens, samples or FLOPs = not told (a user's loop): null, never 0.
    if (r.tokens > 0) tok_s.push_back(static_cast<double>(r.tokens) / (ms * 1e-3));
    if (in.samples_per_step > 0) {
      samples_s.push_back(static_cast<double>(in.samples_per_step) / (ms * 1e-3));
    }
    if (r.flops > 0) flops_s.push_back(r.flops / (ms * 1e-3));
    if (r.flops > 0 && in.peak.flops_per_s > 0) {
      mfu.push_back(r.flops / (ms * 1e-3) / in.peak.flops_per_s);
    }
    faults.push_back(static_cast<double>(r.rusage.minor_faults));
    invol.push_back(static_cast<double>(r.rusage.involuntary_switches));
    cpu.push_back(static_cast<double>(r.rusage.cpu_user_ns + r.rusage.cpu_system_ns) * 1e-6);
  }

  rundir::Summary s;
  s.status = in.status;
  s.message = in.message;
  s.profile_level = in.level;
  s.steps = rundir::StepCounts{done, in.max_steps, skip, done - skip};
  s.wall_s = in.wall_s;
  if (in.parameters > 0) s.parameters = in.parameters;
  s.timing = timing_figures(step, phase, done, in.warmup_steps);
  s.throughput = rundir::ThroughputFigures{stats_of(tok_s), stats_of(samples_s)};
  rundir::FlopsFigures& f = s.flops.emplace();
  if (in.flops_per_step > 0) f.analytic_per_step = in.flops_per_step;
  f.formula = in.flops_per_step > 0 ? in.flops_formula : "unknown: no analytic FLOPs given";
  f.achieved_flops_per_s = stats_of(flops_s);
  s.mfu = rundir::MfuFigures{stats_of(mfu), in.peak.flops_per_s, in.peak.source, in.peak.method,
                             ""};
  s.loss = loss_figures(in.task, rows, *in.evals);
  int64_t peak_rss = 0;
  for (const auto& r : rows) peak_rss = std::max(peak_rss, r.rusage.max_rss_bytes);
  if (done > 0) s.peak_rss_bytes = peak_rss;
  s.process = rundir::ProcessFigures{stats_of(faults), stats_of(invol), stats_of(cpu)};

  // The profiler's own cost at this level: clock reads per step x measured cost of one read.
  rundir::OverheadFigures& o = s.overhead.emplace();
  o.level = in.level;
  o.clock_read_ns = in.clock_read_ns;
  if (done > 0) {
    const double reads = static_cast<double>(rows.back().timing.clock_reads);
    o.events_per_step = reads;
    o.estimated_ms_per_step = reads * in.clock_read_ns * 1e-6;
    if (!step.empty()) o.estimated_fraction_of_step = o.estimated_ms_per_step / *median(step);
  }
  return s;
}

}  // namespace llmprof::train
