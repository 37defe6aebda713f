// load_sweep, aggregation over repeats, Pareto front.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "llmprof/error.h"
#include "llmprof/report/metrics.h"
#include "llmprof/report/sweep.h"
#include "read_util.h"

namespace fs = std::filesystem;

namespace llmprof::report {

namespace {

std::string resolve_run_dir(const fs::path& sweep_dir,
                            const std::string& written,
                            const std::string& point_id) {
  std::vector<fs::path> candidates;
  if (!written.empty()) {
    fs::path w(written);
    candidates.push_back(w);
    if (w.is_relative()) candidates.push_back(sweep_dir / w);
    candidates.push_back(sweep_dir / "runs" / w.filename());
  }
  if (!point_id.empty()) candidates.push_back(sweep_dir / "runs" / point_id);
  for (const auto& c : candidates) {
    if (fs::exists(c / "steps.csv")) return c.string();
  }
  return {};
}

// Metrics of failed, diverged or interrupted points are not comparable: only these count.
bool usable_status(const std::string& status) {
  return status == "completed" || status == "ok" || status.empty();
}

}  // namespace

const std::vector<std::string>& sweep_metric_names() {
  static const std::vector<std::string> kMetrics = {
      "step_ms",        "tokens_per_s",   "mfu",     "train_loss", "val_loss",
      "val_perplexity", "peak_rss_bytes", "energy_j"};
  return kMetrics;
}

bool higher_is_better(const std::string& metric) {
  return metric == "tokens_per_s" || metric == "mfu";
}

Sweep load_sweep(const std::string& dir) {
  fs::path p(dir);
  if (!fs::is_directory(p)) throw DataError(detail::not_a_directory(dir));
  if (fs::exists(p / "sweep.json")) detail::read_json((p / "sweep.json").string());
  detail::CsvFile csv = detail::read_csv((p / "sweep.csv").string());
  Sweep sweep;
  sweep.dir = dir;
  fs::path name = p.filename().empty() ? p.parent_path().filename() : p.filename();
  sweep.label = name.string();
  int repeat = csv.require("repeat");
  for (int c = 0; c < repeat; ++c) sweep.keys.push_back(csv.header[static_cast<size_t>(c)]);
  int point_id = csv.index("point_id"), status = csv.index("status");
  int exit_code = csv.index("exit_code"), run_dir = csv.index("run_dir");
  // `llmprof sweep` writes median_step_ms and final_* names; the contract's short names win.
  static const std::map<std::string, std::string> kAliases = {
      {"step_ms", "median_step_ms"},
      {"train_loss", "final_train_loss"},
      {"val_loss", "final_val_loss"},
      {"val_perplexity", "final_val_perplexity"}};
  std::vector<int> metric_cols;
  for (const auto& m : sweep_metric_names()) {
    int col = csv.index(m);
    auto alias = kAliases.find(m);
    if (col < 0 && alias != kAliases.end()) col = csv.index(alias->second);
    metric_cols.push_back(col);
  }
  const int estimated = csv.index("energy_estimated");
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    if (estimated >= 0 && csv.text(r, estimated) == "1") sweep.energy_estimated = true;
    SweepPoint pt;
    for (int c = 0; c < repeat; ++c) pt.key_values.push_back(csv.text(r, c));
    pt.repeat = static_cast<int64_t>(csv.number(r, repeat).value_or(0));
    pt.point_id = csv.text(r, point_id);
    pt.status = csv.text(r, status);
    pt.exit_code = csv.number(r, exit_code);
    for (size_t m = 0; m < metric_cols.size(); ++m) {
      pt.metrics[sweep_metric_names()[m]] = csv.number(r, metric_cols[m]);
    }
    pt.run_dir = resolve_run_dir(p, csv.text(r, run_dir), pt.point_id);
    sweep.points.push_back(std::move(pt));
  }
  return sweep;
}

std::vector<std::string> short_key_names(const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    size_t dot = k.rfind('.');
    out.push_back(dot == std::string::npos ? k : k.substr(dot + 1));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::count(out.begin(), out.end(), out[i]) > 1) out[i] = keys[i];
  }
  return out;
}

std::vector<SweepConfig> aggregate_sweep(const Sweep& sweep) {
  std::vector<SweepConfig> configs;
  std::vector<std::string> names = short_key_names(sweep.keys);
  for (size_t i = 0; i < sweep.points.size(); ++i) {
    const SweepPoint& pt = sweep.points[i];
    auto it = std::find_if(configs.begin(), configs.end(),
                           [&](const SweepConfig& c) { return c.key_values == pt.key_values; });
    if (it == configs.end()) {
      SweepConfig c;
      c.key_values = pt.key_values;
      for (size_t k = 0; k < names.size(); ++k) {
        c.label += (k ? ", " : "") + names[k] + "=" + pt.key_values[k];
      }
      configs.push_back(c);
      it = configs.end() - 1;
    }
    it->points.push_back(i);
  }
  for (auto& c : configs) {
    std::map<std::string, int64_t> counts;
    std::vector<std::string> order;
    for (size_t i : c.points) {
      const std::string& s = sweep.points[i].status;
      if (counts[s]++ == 0) order.push_back(s);
    }
    c.completed = counts["completed"] + counts["ok"];
    if (order.size() == 1) {
      c.status = order.front();
    } else {
      for (const auto& s : order)
        c.status +=
            fmt::format("{}{} {}", c.status.empty() ? "" : ", ", counts[s], s.empty() ? "?" : s);
    }
    for (const auto& m : sweep_metric_names()) {
      std::vector<double> values;
      for (size_t i : c.points) {
        auto v = sweep.points[i].metrics.at(m);
        if (v && usable_status(sweep.points[i].status)) values.push_back(*v);
      }
      c.metrics[m] = values.empty() ? std::nullopt : std::optional<double>(stats_of(values).median);
    }
  }
  return configs;
}

std::vector<size_t> pareto_front(const std::vector<SweepConfig>& configs, bool with_energy) {
  struct P {
    size_t index;
    double loss, tps, energy;
  };
  std::vector<P> pts;
  for (size_t i = 0; i < configs.size(); ++i) {
    auto loss = configs[i].metrics.at("val_loss");
    auto tps = configs[i].metrics.at("tokens_per_s");
    auto energy = configs[i].metrics.at("energy_j");
    if (!loss || !tps || (with_energy && !energy)) continue;
    pts.push_back({i, *loss, *tps, with_energy ? *energy : 0.0});
  }
  // q dominates p: no worse on every objective and better on one.
  auto dominates = [](const P& q, const P& p) {
    bool no_worse = q.loss <= p.loss && q.tps >= p.tps && q.energy <= p.energy;
    bool better = q.loss < p.loss || q.tps > p.tps || q.energy < p.energy;
    return no_worse && better;
  };
  std::vector<P> front;
  for (const auto& p : pts) {
    bool dominated =
        std::any_of(pts.begin(), pts.end(), [&](const P& q) { return dominates(q, p); });
    if (!dominated) front.push_back(p);
  }
  std::sort(front.begin(), front.end(), [](const P& a, const P& b) { return a.tps < b.tps; });
  std::vector<size_t> out;
  for (const auto& p : front) out.push_back(p.index);
  return out;
}

std::vector<std::string> key_levels(const std::vector<SweepConfig>& configs, size_t k) {
  std::vector<std::string> levels;
  for (const auto& c : configs) {
    if (k < c.key_values.size() &&
        std::find(levels.begin(), levels.end(), c.key_values[k]) == levels.end()) {
      levels.push_back(c.key_values[k]);
    }
  }
  bool numeric = std::all_of(levels.begin(), levels.end(), [](const std::string& s) {
    return detail::parse_number(s).has_value();
  });
  if (numeric) {
    std::stable_sort(levels.begin(), levels.end(), [](const std::string& a, const std::string& b) {
      return *detail::parse_number(a) < *detail::parse_number(b);
    });
  }
  return levels;
}

}  // namespace llmprof::report
