// A data-parallel run's top directory from its ranks' rows (rank_merge.h says what each global
// column is).
#include "llmprof/rundir/rank_merge.h"

#include <algorithm>
#include <map>

#include "llmprof/base/stats.h"

namespace llmprof::rundir {

namespace {

using Field = std::optional<double> StepRow::*;

// The columns summed over ranks, and those that take the largest rank's value.
constexpr Field kSummed[] = {&StepRow::tokens,
                             &StepRow::flops,
                             &StepRow::energy_j,
                             &StepRow::avg_power_w,
                             &StepRow::minor_faults,
                             &StepRow::major_faults,
                             &StepRow::voluntary_switches,
                             &StepRow::involuntary_switches,
                             &StepRow::cpu_ms};
constexpr Field kLargest[] = {&StepRow::eval_ms,
                              &StepRow::max_rss_bytes,
                              &StepRow::device_peak_allocated_bytes,
                              &StepRow::device_reserved_bytes,
                              &StepRow::device_free_reserved_bytes,
                              &StepRow::device_alloc_retries};

// The sum over ranks; null when no rank has it.
std::optional<double> sum_of(const std::vector<const StepRow*>& rows, Field f) {
  std::optional<double> sum;
  for (const StepRow* r : rows) {
    if (r->*f) sum = sum.value_or(0.0) + *(r->*f);
  }
  return sum;
}

std::optional<double> largest_of(const std::vector<const StepRow*>& rows, Field f) {
  std::optional<double> best;
  for (const StepRow* r : rows) {
    if (r->*f && (!best || *(r->*f) > *best)) best = r->*f;
  }
  return best;
}

// Global MFU: the mean over ranks of mfu_r x step_ms_r / the slowest step_ms; null unless every
// rank has both.
std::optional<double> global_mfu(const std::vector<const StepRow*>& rows, double slowest_ms) {
  if (slowest_ms <= 0) return std::nullopt;
  double sum = 0;
  for (const StepRow* r : rows) {
    if (!r->mfu || !r->step_ms) return std::nullopt;
    sum += *r->mfu * *r->step_ms / slowest_ms;
  }
  return sum / static_cast<double>(rows.size());
}

StepRow merge_one(const std::vector<const StepRow*>& rows) {
  size_t slowest = 0;
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r]->step_ms.value_or(0) > rows[slowest]->step_ms.value_or(0)) slowest = r;
  }
  StepRow g = *rows[slowest];  // the times of the step: the slowest rank's
  g.slowest_rank = static_cast<double>(slowest);
  const StepRow& rank0 = *rows.front();
  g.lr = rank0.lr;
  g.grad_norm = rank0.grad_norm;
  g.loss_scale = rank0.loss_scale;
  g.step_skipped = rank0.step_skipped;
  std::optional<double> loss_sum;
  for (const StepRow* r : rows) {
    if (!r->loss) {
      loss_sum.reset();
      break;
    }
    loss_sum = loss_sum.value_or(0.0) + *r->loss;
  }
  g.loss =
      loss_sum ? std::optional<double>(*loss_sum / static_cast<double>(rows.size())) : std::nullopt;
  for (Field f : kSummed) g.*f = sum_of(rows, f);
  for (Field f : kLargest) g.*f = largest_of(rows, f);
  const double ms = g.step_ms.value_or(0);
  g.tokens_per_s =
      g.tokens && ms > 0 ? std::optional<double>(*g.tokens / (ms * 1e-3)) : std::nullopt;
  g.flops_per_s = g.flops && ms > 0 ? std::optional<double>(*g.flops / (ms * 1e-3)) : std::nullopt;
  g.mfu = global_mfu(rows, ms);
  return g;
}

std::optional<Stats> stats_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return summarize(v);
}

}  // namespace

std::vector<StepRow> merge_rank_steps(const std::vector<std::vector<StepRow>>& ranks) {
  std::map<int64_t, std::vector<const StepRow*>> by_step;
  for (const auto& rows : ranks) {
    for (const StepRow& r : rows) by_step[r.step].push_back(&r);
  }
  std::vector<StepRow> out;
  for (const auto& [step, rows] : by_step) {
    if (rows.size() == ranks.size()) out.push_back(merge_one(rows));
  }
  return out;
}

GlobalFigures global_figures(const std::vector<StepRow>& merged,
                             int64_t warmup_steps,
                             double samples_per_step) {
  const size_t from =
      std::min(merged.size(), static_cast<size_t>(std::max<int64_t>(0, warmup_steps)));
  std::vector<double> step = present(merged, "step_ms", from);
  GlobalFigures g;
  TimingFigures& t = g.timing;
  t.step_ms = stats_of(step);
  t.data_ms = stats_of(present(merged, "data_ms", from));
  t.forward_ms = stats_of(present(merged, "forward_ms", from));
  t.backward_ms = stats_of(present(merged, "backward_ms", from));
  t.optimizer_ms = stats_of(present(merged, "optimizer_ms", from));
  if (step.empty()) {
    t.note = "no measured steps: every merged step was warm-up";
  } else if (!t.data_ms && !t.forward_ms && !t.backward_ms && !t.optimizer_ms) {
    t.note = "phases not timed at profile.level=off";
  } else {
    double sum = 0;
    for (const auto& p : {t.data_ms, t.forward_ms, t.backward_ms, t.optimizer_ms}) {
      if (p) sum += p->median;
    }
    t.phase_sum_median_ms = sum;
    t.unattributed_median_ms = t.step_ms->median - sum;
  }
  std::vector<double> samples_s;
  for (double ms : step) {
    if (samples_per_step > 0 && ms > 0) samples_s.push_back(samples_per_step / (ms * 1e-3));
  }
  g.throughput = {stats_of(present(merged, "tokens_per_s", from)), stats_of(samples_s)};
  g.achieved_flops_per_s = stats_of(present(merged, "flops_per_s", from));
  g.mfu = stats_of(present(merged, "mfu", from));
  return g;
}

RankFigures rank_figures(int64_t rank, const Summary& s) {
  RankFigures f;
  f.rank = rank;
  const auto median = [](const std::optional<Stats>& v) {
    return v ? std::optional<double>(v->median) : std::nullopt;
  };
  if (s.timing) {
    f.step_ms = median(s.timing->step_ms);
    f.data_ms = median(s.timing->data_ms);
    f.forward_ms = median(s.timing->forward_ms);
    f.backward_ms = median(s.timing->backward_ms);
    f.optimizer_ms = median(s.timing->optimizer_ms);
  }
  f.tokens_per_s = s.median_tokens_per_s();
  f.mfu = s.median_mfu();
  if (s.loss) f.final_train_step_loss = s.loss->final_train_step_loss;
  return f;
}

std::optional<double> scaling_efficiency(std::optional<double> tokens_per_s_n,
                                         int64_t n,
                                         std::optional<double> tokens_per_s_1) {
  if (!tokens_per_s_n || !tokens_per_s_1 || n < 1 || *tokens_per_s_1 <= 0) return std::nullopt;
  return *tokens_per_s_n / (static_cast<double>(n) * *tokens_per_s_1);
}

}  // namespace llmprof::rundir
