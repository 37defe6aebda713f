#include "summary.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>

#include "llmprof/profile/stats.h"
#include "llmprof/rundir/files.h"

namespace llmprof::train {

namespace {

using nlohmann::json;

json stats_json(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  profile::Summary s = profile::summarize(values);
  json j = {{"n", s.n},       {"mean", s.mean}, {"median", s.median}, {"p10", s.p10},
            {"p90", s.p90},   {"min", s.min},   {"max", s.max}};
  j["stddev"] = s.stddev ? json(*s.stddev) : json(nullptr);
  j["cv"] = s.cv ? json(*s.cv) : json(nullptr);
  return j;
}

double median_of(const std::vector<double>& v) { return profile::summarize(v).median; }

// What summary.json's perplexities are the exp of; a custom loop's loss is read as classification.
const char* perplexity_note(const std::optional<config::TaskKind>& task) {
  if (task == config::TaskKind::kMlm) return "exp of the mean cross-entropy of the masked tokens";
  if (task == config::TaskKind::kLm) return "exp of the mean next-token cross-entropy";
  return "exp of the mean classification cross-entropy";
}

}  // namespace

std::string task_label(const std::optional<config::TaskKind>& task) {
  return task ? std::string(config::name(*task)) : "custom";
}

json build_summary(const SummaryInputs& in) {
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

  json s;
  s["schema_version"] = rundir::kSummarySchemaVersion;
  s["status"] = std::string(config::name(in.status));
  s["message"] = in.message.empty() ? json(nullptr) : json(in.message);
  s["profile_level"] = config::name(in.level);
  s["steps"] = {{"completed", done}, {"max_steps", in.max_steps}, {"warmup_excluded", skip},
                {"measured", done - skip}};
  s["wall_s"] = in.wall_s;
  s["parameters"] = in.parameters > 0 ? json(in.parameters) : json(nullptr);

  json timing;
  timing["step_ms"] = stats_json(step);
  static const char* names[4] = {"data_ms", "forward_ms", "backward_ms", "optimizer_ms"};
  for (int p = 0; p < 4; ++p) timing[names[p]] = stats_json(phase[p]);
  if (step.empty()) {
    timing["note"] = fmt::format("no measured steps: all {} completed steps were warm-up "
                                 "(profile.warmup_steps={})", done, in.warmup_steps);
  } else if (phase[0].empty() && phase[1].empty() && phase[2].empty() && phase[3].empty()) {
    timing["note"] = "phases not timed at profile.level=off";
  } else {
    // Reconciliation: phases should add up to the step; the rest is loop bookkeeping.
    double phase_sum = 0;
    for (int p = 0; p < 4; ++p) phase_sum += phase[p].empty() ? 0.0 : median_of(phase[p]);
    timing["phase_sum_median_ms"] = phase_sum;
    timing["unattributed_median_ms"] = median_of(step) - phase_sum;
  }
  s["timing"] = timing;

  s["throughput"] = {{"tokens_per_s", stats_json(tok_s)}, {"samples_per_s", stats_json(samples_s)}};
  s["flops"] = {{"analytic_per_step", in.flops_per_step > 0 ? json(in.flops_per_step) : json(nullptr)},
                {"formula", in.flops_per_step > 0 ? json(in.flops_formula)
                                                  : json("unknown: no analytic FLOPs given")},
                {"achieved_flops_per_s", stats_json(flops_s)}};
  s["mfu"] = {{"value", stats_json(mfu)},
              {"peak_flops_per_s", in.peak.flops_per_s},
              {"peak_source", in.peak.source},
              {"peak_method", in.peak.method}};

  json loss;
  loss["task"] = task_label(in.task);
  loss["perplexity_note"] = perplexity_note(in.task);
  loss["final_train_step_loss"] = done > 0 ? json(rows.back().loss) : json(nullptr);
  const auto& evals = *in.evals;
  if (!evals.empty()) {
    const EvalPoint& e = evals.back();
    loss["eval_step"] = e.step;
    loss["final_train_loss"] = e.train_loss;
    loss["final_val_loss"] = e.val_loss;
    loss["final_train_perplexity"] = std::exp(e.train_loss);
    loss["final_val_perplexity"] = std::exp(e.val_loss);
    loss["final_train_accuracy"] = e.train_accuracy ? json(*e.train_accuracy) : json(nullptr);
    loss["final_val_accuracy"] = e.val_accuracy ? json(*e.val_accuracy) : json(nullptr);
    if (!e.val_accuracy) loss["accuracy_note"] = "accuracy is reported for train.task=classify";
  } else {
    loss["final_val_loss"] = nullptr;
    loss["note"] = "no eval ran (train.eval_interval=0 or the run stopped first)";
  }
  s["loss"] = loss;

  int64_t peak_rss = 0;
  for (const auto& r : rows) peak_rss = std::max(peak_rss, r.rusage.max_rss_bytes);
  s["memory"] = {{"peak_rss_bytes", done > 0 ? json(peak_rss) : json(nullptr)}};
  s["process"] = {{"minor_faults_per_step", stats_json(faults)},
                  {"involuntary_switches_per_step", stats_json(invol)},
                  {"cpu_ms_per_step", stats_json(cpu)}};

  // The profiler's own cost at this level: clock reads per step x measured cost of one read.
  json overhead;
  overhead["level"] = config::name(in.level);
  overhead["clock_read_ns"] = in.clock_read_ns;
  if (done > 0) {
    const double reads = static_cast<double>(rows.back().timing.clock_reads);
    const double est_ms = reads * in.clock_read_ns * 1e-6;
    overhead["events_per_step"] = reads;
    overhead["estimated_ms_per_step"] = est_ms;
    overhead["estimated_fraction_of_step"] =
        step.empty() ? json(nullptr) : json(est_ms / median_of(step));
  }
  overhead["estimated"] = true;
  s["profiler_overhead"] = overhead;
  return s;
}

}  // namespace llmprof::train
