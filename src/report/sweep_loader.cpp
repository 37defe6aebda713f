// A sweep read back (rundir::load_sweep): aggregation over repeats, the Pareto front.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "llmprof/error.h"
#include "llmprof/report/metrics.h"
#include "llmprof/report/sweep.h"

namespace fs = std::filesystem;

namespace llmprof::report {

namespace {

// Metrics of failed, diverged, interrupted or skipped points are not comparable: only completed
// ones count, and those of a sweep.csv without statuses.
bool usable_status(const SweepPoint& pt) {
  return !pt.skipped && (!pt.status || *pt.status == config::RunStatus::kCompleted);
}

// A point's status as the sweep table prints it; "" for an empty cell.
std::string status_name(const SweepPoint& pt) {
  if (pt.skipped) return std::string(config::name(config::PointStatus::kSkipped));
  return pt.status ? std::string(config::name(*pt.status)) : std::string();
}

}  // namespace

bool higher_is_better(const std::string& metric) {
  return metric == "tokens_per_s" || metric == "mfu" || metric == "overlap" ||
         metric == "busbw_gb_per_s";
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
      const std::string s = status_name(sweep.points[i]);
      if (counts[s]++ == 0) order.push_back(s);
    }
    c.completed = counts[std::string(config::name(config::RunStatus::kCompleted))];
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
        if (v && usable_status(sweep.points[i])) values.push_back(*v);
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
    return rundir::parse_number(s).has_value();
  });
  if (numeric) {
    std::stable_sort(levels.begin(), levels.end(), [](const std::string& a, const std::string& b) {
      return *rundir::parse_number(a) < *rundir::parse_number(b);
    });
  }
  return levels;
}

}  // namespace llmprof::report
