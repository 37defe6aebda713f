// The tables of a sweep: points, pivots over the first two keys, best per metric, Pareto front.
#include <fmt/format.h>

#include "tables.h"

namespace llmprof::report::detail {

namespace {

std::string metric_title(const std::string& metric) {
  static const std::map<std::string, std::string> kTitles = {{"step_ms", "step ms"},
                                                             {"tokens_per_s", "tokens/s"},
                                                             {"mfu", "MFU"},
                                                             {"train_loss", "train loss"},
                                                             {"val_loss", "val loss"},
                                                             {"val_perplexity", "val ppl"},
                                                             {"peak_rss_bytes", "peak RSS"},
                                                             {"energy_j", "energy J"},
                                                             {"ranks", "ranks"},
                                                             {"exposed_comm_ms", "exposed comm ms"},
                                                             {"overlap", "overlap"},
                                                             {"busbw_gb_per_s", "busbw GB/s"}};
  auto it = kTitles.find(metric);
  return it == kTitles.end() ? metric : it->second;
}

Cell metric_cell(const std::string& metric, std::optional<double> v) {
  if (metric == "mfu" || metric == "overlap") return percent_cell(v);
  if (metric == "ranks") return count_cell(v);
  if (metric == "peak_rss_bytes") return bytes_cell(v);
  if (metric == "tokens_per_s") return number_cell(v, 5);
  return number_cell(v);
}

// a is better than b for metric (unknown is worst).
bool better(const std::string& metric, std::optional<double> a, std::optional<double> b) {
  if (!a) return false;
  if (!b) return true;
  return higher_is_better(metric) ? *a > *b : *a < *b;
}

}  // namespace

Table sweep_points_table(const Sweep& sweep, const std::vector<SweepConfig>& configs) {
  Table t;
  t.id = "sweep.points";
  t.title = "Sweep " + sweep.label + ": points";
  std::vector<std::string> names = short_key_names(sweep.keys);
  for (size_t k = 0; k < sweep.keys.size(); ++k) t.columns.push_back({sweep.keys[k], names[k]});
  t.columns.push_back({"repeats", "repeats"});
  t.columns.push_back({"status", "status"});
  for (const auto& m : sweep_metric_names()) {
    const bool est = m == "energy_j" && sweep.energy_estimated;
    t.columns.push_back({m, est ? "energy J (est.)" : metric_title(m)});
  }
  if (sweep.energy_estimated) {
    t.notes.push_back("energy J (est.): estimated from energy.cpu_tdp_w x CPU utilisation, not measured.");
  }
  bool repeats = false;
  for (const auto& c : configs) {
    std::vector<Cell> row;
    for (const auto& v : c.key_values) row.push_back(text_cell(v));
    row.push_back(count_cell(static_cast<double>(c.points.size())));
    row.push_back(text_cell(c.status));
    for (const auto& m : sweep_metric_names()) row.push_back(metric_cell(m, c.metrics.at(m)));
    t.rows.push_back(std::move(row));
    repeats |= c.points.size() > 1;
  }
  t.notes.push_back(fmt::format("{} points in {} configurations; swept keys: {}.",
                                sweep.points.size(), configs.size(), fmt::join(sweep.keys, ", ")));
  if (repeats) t.notes.push_back("Metrics are medians over the completed repeats.");
  return t;
}

Table sweep_pivot_table(const Sweep& sweep,
                        const std::vector<SweepConfig>& configs,
                        const std::string& metric) {
  std::vector<std::string> names = short_key_names(sweep.keys);
  Table t;
  t.id = "sweep.pivot." + metric;
  std::vector<std::string> rows = key_levels(configs, 0);
  std::vector<std::string> cols =
      sweep.keys.size() >= 2 ? key_levels(configs, 1) : std::vector<std::string>{""};
  if (sweep.keys.size() >= 2) {
    t.title = fmt::format("Sweep {}: {} by {} (rows) and {} (columns)", sweep.label,
                          metric_title(metric), names[0], names[1]);
    t.columns.push_back({sweep.keys[0], names[0] + " \\ " + names[1]});
    for (const auto& c : cols) t.columns.push_back({sweep.keys[1] + "=" + c, c});
  } else {
    t.title = fmt::format("Sweep {}: {} by {}", sweep.label, metric_title(metric), names[0]);
    t.columns = {{sweep.keys[0], names[0]}, {metric, metric_title(metric)}};
  }
  for (const auto& r : rows) {
    std::vector<Cell> row{text_cell(r)};
    for (const auto& c : cols) {
      std::optional<double> best;
      for (const auto& cfg : configs) {
        bool match = cfg.key_values[0] == r && (sweep.keys.size() < 2 || cfg.key_values[1] == c);
        if (match && better(metric, cfg.metrics.at(metric), best)) best = cfg.metrics.at(metric);
      }
      row.push_back(metric_cell(metric, best));
    }
    t.rows.push_back(std::move(row));
  }
  if (sweep.keys.size() > 2) {
    t.notes.push_back(fmt::format("Each cell is the best over the other swept keys ({}).",
                                  fmt::join(sweep.keys.begin() + 2, sweep.keys.end(), ", ")));
  }
  return t;
}

Table sweep_best_table(const Sweep& sweep, const std::vector<SweepConfig>& configs) {
  Table t;
  t.id = "sweep.best";
  t.title = "Sweep " + sweep.label + ": best point per metric";
  t.columns = {{"metric", "metric"},
               {"goal", "goal"},
               {"value", "value"},
               {"config", "config"},
               {"point_ids", "points"}};
  for (const auto& m : sweep_metric_names()) {
    if (m == "val_perplexity" || m == "ranks") continue;  // same order as val_loss; not a goal
    const SweepConfig* best = nullptr;
    for (const auto& c : configs) {
      if (better(m, c.metrics.at(m), best ? best->metrics.at(m) : std::nullopt)) best = &c;
    }
    if (best == nullptr) continue;
    std::vector<std::string> ids;
    for (size_t i : best->points) ids.push_back(sweep.points[i].point_id);
    t.rows.push_back({text_cell(metric_title(m)), text_cell(higher_is_better(m) ? "max" : "min"),
                      metric_cell(m, best->metrics.at(m)), text_cell(best->label),
                      text_cell(fmt::format("{}", fmt::join(ids, " ")))});
  }
  return t;
}

Table sweep_pareto_table(const Sweep& sweep, const std::vector<SweepConfig>& configs) {
  bool with_energy = !configs.empty();
  for (const auto& c : configs) {
    if (c.completed > 0 && !c.metrics.at("energy_j")) with_energy = false;
  }
  std::vector<size_t> front = pareto_front(configs, with_energy);
  Table t;
  t.id = "sweep.pareto";
  t.title = fmt::format("Sweep {}: Pareto front, val loss vs tokens/s{}", sweep.label,
                        with_energy ? " vs energy" : "");
  t.columns = {{"config", "config"},     {"val_loss", "val loss"}, {"tokens_per_s", "tokens/s"},
               {"energy_j", sweep.energy_estimated ? "energy J (est.)" : "energy J"},
               {"mfu", "MFU"},           {"step_ms", "step ms"}};
  for (size_t i : front) {
    const SweepConfig& c = configs[i];
    t.rows.push_back({text_cell(c.label), metric_cell("val_loss", c.metrics.at("val_loss")),
                      metric_cell("tokens_per_s", c.metrics.at("tokens_per_s")),
                      metric_cell("energy_j", c.metrics.at("energy_j")),
                      metric_cell("mfu", c.metrics.at("mfu")),
                      metric_cell("step_ms", c.metrics.at("step_ms"))});
  }
  t.notes.push_back(fmt::format(
      "Configurations no other beats on lower val loss, higher tokens/s{} at once; sorted by "
      "tokens/s.{}",
      with_energy ? " and lower energy" : "",
      with_energy ? "" : " Energy is not measured for every point, so it is left out."));
  return t;
}

}  // namespace llmprof::report::detail
