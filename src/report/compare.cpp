#include "llmprof/report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace llmprof::report {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kP10ToP90Sigmas = 2 * 1.645;  // normal quantiles: p90 - p10 = 2 * 1.645 sigma

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *a == 0) return std::nullopt;
  return *b / *a;
}

std::vector<Column> side_columns(const Run& a, const Run& b, const char* first) {
  return {{first, first}, {"a", "A: " + a.label}, {"b", "B: " + b.label}, {"ratio", "B/A"}};
}

// A row of the phases table: a steps.csv column, its title and the factor it is shown at.
struct PhaseMetric {
  std::string column;
  std::string title;
  double scale = 1;
};

std::vector<PhaseMetric> phase_metrics() {
  std::vector<PhaseMetric> metrics;
  for (const auto& p : phase_names()) metrics.push_back({p + "_ms", p + " ms"});
  metrics.push_back({"step_ms", "step ms"});
  metrics.push_back({"tokens_per_s", "tokens/s"});
  metrics.push_back({"flops_per_s", "achieved GFLOP/s", 1e-9});
  metrics.push_back({"mfu", "MFU"});
  metrics.push_back({"minor_faults", "minor faults"});
  metrics.push_back({"involuntary_switches", "invol. switches"});
  metrics.push_back({"cpu_ms", "CPU ms"});
  metrics.push_back({"energy_j", "energy J"});
  return metrics;
}

// The MFU peaks of a and b when both are known and differ by more than kMfuPeakMismatch.
std::optional<std::pair<double, double>> differing_peaks(const Run& a, const Run& b) {
  if (!a.peak_flops_per_s || !b.peak_flops_per_s || *a.peak_flops_per_s <= 0) return std::nullopt;
  const double r = *b.peak_flops_per_s / *a.peak_flops_per_s;
  if (std::fabs(r - 1) <= kMfuPeakMismatch) return std::nullopt;
  return std::make_pair(*a.peak_flops_per_s, *b.peak_flops_per_s);
}

// Runs of different world sizes: the ranks, and the scaling efficiency of B against A, (tokens/s
// B / tokens/s A) / (ranks B / ranks A), each tokens/s global (a data-parallel run's steps.csv:
// all ranks' tokens over the slowest rank's step).
void add_scaling_rows(
    Table& t, const Run& a, const RunMetrics& ma, const Run& b, const RunMetrics& mb) {
  if (a.world_size == b.world_size) return;
  const auto wa = static_cast<double>(a.world_size), wb = static_cast<double>(b.world_size);
  t.rows.push_back({text_cell("ranks"), count_cell(wa), count_cell(wb), ratio_cell(wb / wa),
                    number_cell({}), number_cell({}), text_cell("n/a")});
  const Stats* sa = ma.stat("tokens_per_s");
  const Stats* sb = mb.stat("tokens_per_s");
  std::optional<double> efficiency;
  if (sa && sb && sa->median > 0) efficiency = (sb->median / sa->median) / (wb / wa);
  t.rows.push_back({text_cell("scaling efficiency"), number_cell({}), number_cell({}),
                    percent_cell(efficiency), number_cell({}), number_cell({}), text_cell("n/a")});
  t.notes.push_back(fmt::format(
      "A trains on {} rank(s), B on {}: tokens/s is each run's global rate (all ranks' tokens over "
      "the slowest rank's step); scaling efficiency = (tokens/s B / tokens/s A) / ({} / {}), 100% "
      "when each rank keeps its one-rank rate.",
      a.world_size, b.world_size, b.world_size, a.world_size));
}

Table phase_compare(const Run& a, const RunMetrics& ma, const Run& b, const RunMetrics& mb) {
  Table t;
  t.id = "compare.phases";
  t.title = "Compare: phases and throughput (medians per step)";
  t.columns = side_columns(a, b, "metric");
  t.columns.push_back({"abs_diff", "abs(B-A)"});
  t.columns.push_back({"noise_threshold", "noise threshold"});
  t.columns.push_back({"significant", "significant"});
  const auto peaks = differing_peaks(a, b);
  for (const auto& [column, title, scale] : phase_metrics()) {
    const Stats* sa = ma.stat(column);
    const Stats* sb = mb.stat(column);
    if (!sa && !sb) continue;
    std::optional<double> va, vb, diff, threshold;
    if (sa) va = sa->median * scale;
    if (sb) vb = sb->median * scale;
    std::string sig = "n/a";
    if (sa && sb) {
      diff = std::fabs(sb->median - sa->median) * scale;
      threshold = median_noise_threshold(*sa, *sb) * scale;
      sig = significant_change(*sa, *sb) ? "yes" : "no";
      if (column == "mfu" && peaks) sig = "n/a: peaks differ";
    }
    auto cell = [&, c = column](std::optional<double> v) {
      return c == "mfu" ? percent_cell(v) : number_cell(v);
    };
    t.rows.push_back({text_cell(title), cell(va), cell(vb), ratio_cell(ratio(va, vb)), cell(diff),
                      cell(threshold), text_cell(sig)});
  }
  add_scaling_rows(t, a, ma, b, mb);
  auto gflops = [](std::optional<double> v) { return v ? std::optional<double>(*v * 1e-9) : v; };
  t.rows.push_back({text_cell("MFU peak GFLOP/s"), number_cell(gflops(a.peak_flops_per_s)),
                    number_cell(gflops(b.peak_flops_per_s)),
                    ratio_cell(ratio(a.peak_flops_per_s, b.peak_flops_per_s)), number_cell({}),
                    number_cell({}), text_cell(peaks ? "differ" : "n/a")});
  t.notes.push_back(fmt::format("A: {} steps measured; B: {} steps measured (after warm-up).",
                                ma.stat("step_ms") ? ma.stat("step_ms")->n : 0,
                                mb.stat("step_ms") ? mb.stat("step_ms")->n : 0));
  if (peaks) {
    t.notes.push_back(fmt::format(
        "MFU divides by different peaks (env.json peak_flops: A {} GFLOP/s, B {} GFLOP/s, {}x): "
        "its B/A ratio mixes the change of work rate with the change of peak and is not tested; "
        "compare achieved GFLOP/s (the same FLOPs per step over the step time).",
        format_number(peaks->first * 1e-9), format_number(peaks->second * 1e-9),
        format_number(peaks->second / peaks->first, 3)));
  }
  const std::vector<ConfigDifference> diffs = config_differences(a, b);
  if (!diffs.empty()) {
    std::vector<std::string> keys;
    for (const auto& d : diffs) keys.push_back(d.key);
    t.notes.push_back(fmt::format("Config keys that differ (compare.config): {}.",
                                  fmt::join(keys, ", ")));
  }
  return t;
}

Table config_compare(const Run& a, const Run& b) {
  Table t;
  t.id = "compare.config";
  t.title = "Compare: config keys that differ";
  t.columns = {{"key", "key"}, {"a", "A: " + a.label}, {"b", "B: " + b.label}};
  for (const auto& d : config_differences(a, b)) {
    t.rows.push_back({text_cell(d.key), text_cell(d.a ? *d.a : "(absent)"),
                      text_cell(d.b ? *d.b : "(absent)")});
  }
  t.notes.push_back(t.rows.empty() ? "The two config.yaml files hold the same values."
                                   : "Every key of config.yaml whose value differs, output "
                                     "keys included.");
  return t;
}

Table outcome_compare(const Run& a, const RunMetrics& ma, const Run& b, const RunMetrics& mb) {
  Table t;
  t.id = "compare.outcome";
  t.title = "Compare: outcome";
  t.columns = side_columns(a, b, "metric");
  auto row = [&](const std::string& name, std::optional<double> va, std::optional<double> vb,
                 bool bytes) {
    t.rows.push_back({text_cell(name), bytes ? bytes_cell(va) : number_cell(va),
                      bytes ? bytes_cell(vb) : number_cell(vb), ratio_cell(ratio(va, vb))});
  };
  row("train loss", ma.final_train_loss, mb.final_train_loss, false);
  row("val loss", ma.final_val_loss, mb.final_val_loss, false);
  row("val perplexity", ma.final_val_perplexity, mb.final_val_perplexity, false);
  row("peak RSS", ma.peak_rss_bytes, mb.peak_rss_bytes, true);
  row("eval ms (all evals)", ma.eval_total_ms, mb.eval_total_ms, false);
  row("energy J (run)", ma.energy_j, mb.energy_j, false);
  t.notes.push_back("Single values per run: no per-step spread, so no significance test.");
  return t;
}

std::optional<Table> module_compare(const Run& a,
                                    const RunMetrics& ma,
                                    const Run& b,
                                    const RunMetrics& mb) {
  if (a.modules.empty() || b.modules.empty()) return std::nullopt;
  Table t;
  t.id = "compare.modules";
  t.title = "Compare: modules (ms per step, summed over blocks)";
  t.columns = side_columns(a, b, "scope");
  for (const char* pass : {"forward", "backward"}) {
    const auto& sa = std::string(pass) == "forward" ? ma.forward_scopes : ma.backward_scopes;
    const auto& sb = std::string(pass) == "forward" ? mb.forward_scopes : mb.backward_scopes;
    for (const auto& scope : scope_order()) {
      auto ia = sa.find(scope);
      auto ib = sb.find(scope);
      if (ia == sa.end() && ib == sb.end()) continue;
      std::optional<double> va, vb;
      if (ia != sa.end()) va = ia->second.total_ms;
      if (ib != sb.end()) vb = ib->second.total_ms;
      t.rows.push_back({text_cell(scope + (pass[0] == 'f' ? " fwd" : " bwd")), ms_cell(va),
                        ms_cell(vb), ratio_cell(ratio(va, vb))});
    }
  }
  t.notes.push_back("modules.csv holds per-step means, no spread: ratios only.");
  return t;
}

std::optional<Table> ops_compare(const Run& a, const Run& b, size_t top_n) {
  if (a.ops.empty() || b.ops.empty()) return std::nullopt;
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> self;
  for (const auto& o : a.ops)
    self[o.op].first = o.self_ms.value_or(0) + self[o.op].first.value_or(0);
  for (const auto& o : b.ops)
    self[o.op].second = o.self_ms.value_or(0) + self[o.op].second.value_or(0);
  std::vector<std::string> names;
  for (const auto& [op, v] : self) names.push_back(op);
  auto key = [&](const std::string& op) {
    return std::max(self[op].first.value_or(0), self[op].second.value_or(0));
  };
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string& x, const std::string& y) { return key(x) > key(y); });
  Table t;
  t.id = "compare.ops";
  t.title = fmt::format("Compare: top {} ops (self ms per step)", std::min(top_n, names.size()));
  t.columns = side_columns(a, b, "op");
  for (size_t i = 0; i < names.size() && i < top_n; ++i) {
    auto [va, vb] = self[names[i]];
    t.rows.push_back({text_cell(names[i]), ms_cell(va), ms_cell(vb), ratio_cell(ratio(va, vb))});
  }
  t.notes.push_back("ops.csv holds per-step means, no spread: ratios only.");
  return t;
}

}  // namespace

double median_standard_error(const Stats& s) {
  if (s.n <= 0) return 0;
  double sigma = (s.p90 - s.p10) / kP10ToP90Sigmas;
  return sigma * std::sqrt(kPi / 2) / std::sqrt(static_cast<double>(s.n));
}

double median_noise_threshold(const Stats& a, const Stats& b) {
  double se_a = median_standard_error(a), se_b = median_standard_error(b);
  return kSignificanceStandardErrors * std::sqrt(se_a * se_a + se_b * se_b);
}

bool significant_change(const Stats& a, const Stats& b) {
  return std::fabs(b.median - a.median) > median_noise_threshold(a, b);
}

std::vector<ConfigDifference> config_differences(const Run& a, const Run& b) {
  std::vector<ConfigDifference> out;
  auto ia = a.config.begin(), ib = b.config.begin();
  while (ia != a.config.end() || ib != b.config.end()) {  // a merge of two sorted maps
    if (ib == b.config.end() || (ia != a.config.end() && ia->first < ib->first)) {
      out.push_back({ia->first, ia->second, std::nullopt});
      ++ia;
    } else if (ia == a.config.end() || ib->first < ia->first) {
      out.push_back({ib->first, std::nullopt, ib->second});
      ++ib;
    } else {
      if (ia->second != ib->second) out.push_back({ia->first, ia->second, ib->second});
      ++ia;
      ++ib;
    }
  }
  return out;
}

std::vector<Table> compare_tables(const Run& a,
                                  const RunMetrics& ma,
                                  const Run& b,
                                  const RunMetrics& mb) {
  std::vector<Table> out{config_compare(a, b), phase_compare(a, ma, b, mb),
                         outcome_compare(a, ma, b, mb)};
  if (auto t = module_compare(a, ma, b, mb)) out.push_back(std::move(*t));
  if (auto t = ops_compare(a, b, 15)) out.push_back(std::move(*t));
  return out;
}

std::vector<std::string> compare_method_notes() {
  return {
      "Significance (compare): for each per-step figure, sigma = (p90 - p10) / (2 x 1.645) of a "
      "run's steps after warm-up; the standard error of its median is sigma x sqrt(pi/2) / "
      "sqrt(n); a change is significant when |median_B - median_A| > 3 x sqrt(se_A^2 + se_B^2) "
      "(the noise threshold column).",
      "Ratios are B/A. Modules, ops and single-value outcomes carry no per-step spread and are "
      "not tested."};
}

}  // namespace llmprof::report
