#include "llmprof/base/numbers.h"
#include "llmprof/report/metrics.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmprof::report {

namespace {

int64_t warmup_rows(const Run& run, size_t rows) {
  int64_t w = 0;
  if (run.summary_warmup_steps) {
    w = *run.summary_warmup_steps;
  } else if (auto c = run.config_number("profile.warmup_steps")) {
    w = truncated_int64(*c).value_or(0);
  }
  if (w < 0 || static_cast<size_t>(w) >= rows) return 0;
  return w;
}

void add_scope(std::map<std::string, ScopeTotal>& scopes, const ModuleRow& m) {
  ScopeTotal& t = scopes[m.scope];
  double ms = m.total_ms.value_or(0);
  // share_of_pass and flops stay known only while every row carries them.
  t.share_of_pass = (t.rows == 0 || t.share_of_pass) && m.share_of_pass
                        ? std::optional<double>(t.share_of_pass.value_or(0) + *m.share_of_pass)
                        : std::nullopt;
  t.flops = (t.rows == 0 || t.flops) && m.flops
                ? std::optional<double>(t.flops.value_or(0) + *m.flops)
                : std::nullopt;
  // mfu: time-weighted mean, accumulated as sum(mfu * ms) then divided at the end.
  t.mfu = (t.rows == 0 || t.mfu) && m.mfu ? std::optional<double>(t.mfu.value_or(0) + *m.mfu * ms)
                                          : std::nullopt;
  t.total_ms += ms;
  t.calls += m.calls.value_or(0);
  ++t.rows;
}

void finish_scopes(std::map<std::string, ScopeTotal>& scopes) {
  for (auto& [name, t] : scopes) {
    if (t.mfu) t.mfu = t.total_ms > 0 ? std::optional<double>(*t.mfu / t.total_ms) : std::nullopt;
  }
}

}  // namespace

Stats stats_of(std::vector<double> values) { return summarize(std::move(values)); }

const std::vector<std::string>& phase_names() {
  static const std::vector<std::string> kPhases = {"data", "forward", "backward", "optimizer"};
  return kPhases;
}

const std::vector<std::string>& scope_order() {
  static const std::vector<std::string> kScopes = {
      "embedding",   "block",        "ln_1",     "attn",      "attn.qkv", "attn.core",
      "attn.scores", "attn.softmax", "attn.mix", "attn.proj", "ln_2",     "mlp",
      "mlp.up",      "mlp.act",      "mlp.down", "ln_f",      "lm_head",  "loss",
      "attn.q",      "attn.k",       "attn.v",   "attn.rope", "attn.o",   "mlp.gate", "norm"};
  return kScopes;
}

const Stats* RunMetrics::stat(const std::string& column) const {
  auto it = step.find(column);
  return it == step.end() || it->second.n == 0 ? nullptr : &it->second;
}

std::optional<double> RunMetrics::phase_share(const std::string& phase) const {
  const Stats* p = stat(phase + "_ms");
  const Stats* s = stat("step_ms");
  if (p == nullptr || s == nullptr || s->median <= 0) return std::nullopt;
  return p->median / s->median;
}

RunMetrics compute_metrics(const Run& run) {
  RunMetrics m;
  size_t rows = run.steps.size();
  m.steps_completed = static_cast<int64_t>(rows);
  m.warmup_excluded = warmup_rows(run, rows);
  for (const rundir::StepColumn& c : rundir::step_columns()) {
    const std::string name(c.name);
    m.step[name] = stats_of(present(run.steps, name, static_cast<size_t>(m.warmup_excluded)));
  }
  for (double v : present(run.steps, "step_ms")) m.step_total_ms += v;
  auto evals = present(run.steps, "eval_ms");
  for (double v : evals) m.eval_total_ms += v;
  if (!evals.empty() && m.step_total_ms + m.eval_total_ms > 0) {
    m.eval_share = m.eval_total_ms / (m.step_total_ms + m.eval_total_ms);
  }

  for (const auto& e : run.evals) {  // eval.csv is in step order: the last row of a split wins
    if (e.split == "val") {
      m.final_val_loss = e.loss;
      m.final_val_perplexity = e.perplexity ? *e.perplexity : std::exp(e.loss);
    } else if (e.split == "train") {
      m.final_train_loss = e.loss;
      m.train_loss_from_eval = true;
    }
  }
  if (!m.final_train_loss) {
    auto losses = present(run.steps, "loss");
    if (!losses.empty()) m.final_train_loss = losses.back();
  }

  auto rss = present(run.steps, "max_rss_bytes");
  if (!rss.empty()) {
    m.peak_rss_bytes = *std::max_element(rss.begin(), rss.end());
  } else {
    m.peak_rss_bytes = run.summary_peak_rss_bytes;
  }
  if (run.energy && run.energy->total_j) {
    m.energy_j = run.energy->total_j;
    m.energy_estimated = run.energy->estimated;
  } else {
    auto joules = present(run.steps, "energy_j");
    if (!joules.empty()) {
      double sum = 0;
      for (double j : joules) sum += j;
      m.energy_j = sum;
    }
  }

  for (const auto& mod : run.modules) {
    add_scope(mod.pass == "forward" ? m.forward_scopes : m.backward_scopes, mod);
  }
  finish_scopes(m.forward_scopes);
  finish_scopes(m.backward_scopes);

  std::map<std::string, std::vector<double>> ends;
  for (const auto& row : run.memory) {
    if (m.memory.find(row.phase) == m.memory.end()) m.memory_phases.push_back(row.phase);
    PhaseMemory& pm = m.memory[row.phase];
    auto keep_max = [](std::optional<double>& acc, const std::optional<double>& v) {
      if (v) acc = acc ? std::max(*acc, *v) : *v;
    };
    keep_max(pm.peak_allocated_bytes, row.peak_allocated_bytes);
    keep_max(pm.rss_bytes, row.rss_bytes);
    if (row.end_allocated_bytes) ends[row.phase].push_back(*row.end_allocated_bytes);
  }
  for (auto& [phase, values] : ends) m.memory[phase].end_allocated_bytes = stats_of(values).median;
  return m;
}

}  // namespace llmprof::report
