// Where optimisation pays: ops and modules ranked by the time they spend above the roofline
// (ops.csv / modules.csv lost_ms), with the roofs they were measured against.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "llmprof/profile/roofline.h"
#include "tables.h"

namespace llmprof::report::detail {

namespace {

// The roofs of a run and its ridge point, as a note under each roofline table.
std::string roofs_note(const Run& run) {
  return fmt::format(
      "Roofs: {} GFLOP/s (env.json peak_flops) and {} GB/s (env.json peak_bandwidth), ridge at {} "
      "FLOP/B. Bytes are a lower bound (each input read once, each output written once), so the "
      "roofline time is one too and lost time an upper bound; 'overhead' = more than {:.0f}x the "
      "roofline time (dispatch- or framework-bound). Achieved GB/s above the memory roof means the "
      "data sat in cache.",
      format_number(*run.peak_flops_per_s * 1e-9), format_number(*run.peak_bytes_per_s * 1e-9),
      format_number(*run.peak_flops_per_s / *run.peak_bytes_per_s), profile::kOverheadFactor);
}

bool has_roofs(const Run& run) {
  return run.peak_flops_per_s && *run.peak_flops_per_s > 0 && run.peak_bytes_per_s &&
         *run.peak_bytes_per_s > 0;
}

std::optional<double> share(std::optional<double> part, double whole) {
  return part && whole > 0 ? std::optional<double>(*part / whole) : std::nullopt;
}

}  // namespace

std::optional<Table> roofline_ops_table(const Run& run, size_t top_n) {
  std::vector<const OpRow*> ops;
  double lost = 0, unmodelled_ms = 0;
  size_t unmodelled = 0;
  for (const auto& o : run.ops) {
    if (o.roofline.lost_ms) {
      ops.push_back(&o);
      lost += *o.roofline.lost_ms;
    } else if (!o.roofline.bytes && !o.flops) {
      ++unmodelled;
      unmodelled_ms += o.self_ms.value_or(0);
    }
  }
  if (ops.empty() || !has_roofs(run)) return std::nullopt;
  std::stable_sort(ops.begin(), ops.end(), [](const OpRow* a, const OpRow* b) {
    return *a->roofline.lost_ms > *b->roofline.lost_ms;
  });
  Table t;
  t.id = "roofline.ops." + run.label;
  t.title = "Where optimisation pays, ops by time above the roofline: " + run.label;
  t.columns = {{"rank", "#"},
               {"op", "op"},
               {"calls", "calls"},
               {"self_ms", "self ms"},
               {"roofline_ms", "roofline ms"},
               {"lost_ms", "lost ms"},
               {"lost_share", "share of lost"},
               {"bound", "bound"},
               {"arithmetic_intensity", "FLOP/B"},
               {"achieved_gflops_per_s", "GFLOP/s"},
               {"achieved_gb_per_s", "GB/s"},
               {"bytes", "bytes (lower bound)"}};
  for (size_t i = 0; i < ops.size() && i < top_n; ++i) {
    const OpRow& o = *ops[i];
    t.rows.push_back({count_cell(static_cast<double>(i + 1)), text_cell(o.op), count_cell(o.calls),
                      ms_cell(o.self_ms), ms_cell(o.roofline.roofline_ms),
                      ms_cell(o.roofline.lost_ms), percent_cell(share(o.roofline.lost_ms, lost)),
                      text_cell(o.roofline.bound), number_cell(o.roofline.arithmetic_intensity),
                      number_cell(o.roofline.achieved_gflops_per_s),
                      number_cell(o.roofline.achieved_gb_per_s), bytes_cell(o.roofline.bytes)});
  }
  t.notes.push_back(fmt::format(
      "Per step; {} modelled ops lose {} ms in all; {} ops without a byte or FLOP model ({} ms "
      "self) are left out. Each call counts its own FLOPs and bytes (its model less that of the "
      "modelled ops nested in it: clone keeps none of its copy_'s) against its self time, so "
      "nothing is counted twice and lost ms never exceeds self ms.",
      ops.size(), format_number(lost), unmodelled, format_number(unmodelled_ms)));
  t.notes.push_back(roofs_note(run));
  return t;
}

std::optional<Table> roofline_modules_table(const Run& run, size_t top_n) {
  if (!has_roofs(run)) return std::nullopt;
  struct Sum {
    double self_ms = 0, roofline_ms = 0, unmodelled_ms = 0, lost_ms = 0, bytes = 0, flops = 0;
  };
  std::map<std::pair<std::string, std::string>, Sum> sums;  // (scope, pass), over blocks
  for (const auto& r : run.modules) {
    const RooflineColumns& c = r.roofline;
    if (!c.lost_ms || !c.roofline_ms) continue;
    Sum& s = sums[{r.scope, r.pass}];
    s.self_ms += r.self_ms.value_or(0);
    s.roofline_ms += *c.roofline_ms;
    s.unmodelled_ms += c.unmodelled_ms.value_or(0);
    s.lost_ms += *c.lost_ms;
    s.bytes += c.bytes.value_or(0);
    if (c.achieved_gflops_per_s && r.self_ms) {  // the rate is of the modelled time
      const double modelled_ms = *r.self_ms - c.unmodelled_ms.value_or(0);
      s.flops += *c.achieved_gflops_per_s * modelled_ms * 1e6;
    }
  }
  if (sums.empty()) return std::nullopt;
  std::vector<std::pair<std::pair<std::string, std::string>, Sum>> rows(sums.begin(), sums.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.lost_ms > b.second.lost_ms; });
  double lost = 0;
  for (const auto& [key, s] : rows) lost += s.lost_ms;
  const double ridge = *run.peak_flops_per_s / *run.peak_bytes_per_s;
  Table t;
  t.id = "roofline.modules." + run.label;
  t.title = "Where optimisation pays, modules by time above the roofline: " + run.label;
  t.columns = {{"rank", "#"},          {"scope", "scope"},
               {"pass", "pass"},       {"self_ms", "self ms"},
               {"roofline_ms", "roofline ms"}, {"unmodelled_ms", "unmodelled ms"},
               {"lost_ms", "lost ms"},
               {"lost_share", "share of lost"}, {"bound", "bound"},
               {"arithmetic_intensity", "FLOP/B"}};
  for (size_t i = 0; i < rows.size() && i < top_n; ++i) {
    const auto& [key, s] = rows[i];
    std::optional<double> intensity;
    if (s.bytes > 0) intensity = s.flops / s.bytes;
    const double modelled_ms = s.self_ms - s.unmodelled_ms;
    const char* bound = modelled_ms > profile::kOverheadFactor * s.roofline_ms ? "overhead"
                        : intensity.value_or(0) >= ridge                    ? "compute"
                                                                            : "memory";
    t.rows.push_back({count_cell(static_cast<double>(i + 1)), text_cell(key.first),
                      text_cell(key.second), ms_cell(s.self_ms), ms_cell(s.roofline_ms),
                      ms_cell(s.unmodelled_ms), ms_cell(s.lost_ms), percent_cell(share(s.lost_ms, lost)), text_cell(bound),
                      number_cell(intensity)});
  }
  t.notes.push_back(
      "Per step, each scope summed over blocks; a scope's figures are those of the ops whose "
      "innermost scope it is (self), each op's own FLOPs and bytes as in the ops table, so rows "
      "add up. unmodelled ms: the self time of its ops without a byte or FLOP model (or without "
      "recorded shapes), never counted as lost; lost ms = self - unmodelled - roofline. " +
      roofs_note(run));
  return t;
}

}  // namespace llmprof::report::detail
