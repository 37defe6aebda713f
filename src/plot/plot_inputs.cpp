// Loading what the charts draw: runs (given, or a sweep's completed point runs) and the variants
// of the cross-run charts (sweep configurations, or the given runs when there is no sweep).
#include <fmt/format.h>

#include <algorithm>

#include "chart.h"
#include "llmprof/base/numbers.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"

namespace llmprof::plot::detail {

namespace {

using report::RunMetrics;
using rundir::Run;

std::optional<double> sum_of(const Run& run, const std::string& column) {
  auto values = rundir::present(run.steps, column);
  if (values.empty()) return std::nullopt;
  double s = 0;
  for (double v : values) s += v;
  return s;
}

// Energy per run: summary.json energy, else the sum of steps.csv energy_j.
std::optional<double> run_energy_j(const Run& run) {
  if (run.energy && run.energy->total_j) return run.energy->total_j;
  return sum_of(run, "energy_j");
}

std::optional<double> flops_per_j(const Run& run) {
  if (run.energy && run.energy->flops_per_j) return run.energy->flops_per_j;
  auto flops = sum_of(run, "flops");
  auto joules = run_energy_j(run);
  if (!flops || !joules || *joules <= 0) return std::nullopt;
  return *flops / *joules;
}

std::optional<double> tokens_per_j(const Run& run) {
  if (run.energy && run.energy->tokens_per_j) return run.energy->tokens_per_j;
  auto tokens = sum_of(run, "tokens");
  auto joules = run_energy_j(run);
  if (!tokens || !joules || *joules <= 0) return std::nullopt;
  return *tokens / *joules;
}

std::string model_name(std::optional<double> n_layer, std::optional<double> n_embd) {
  const std::optional<int64_t> layers = n_layer ? whole_int64(*n_layer) : std::nullopt;
  const std::optional<int64_t> width = n_embd ? whole_int64(*n_embd) : std::nullopt;
  if (!layers || !width) return "unknown size";
  return fmt::format("{} x {}", *layers, *width);
}

std::optional<double> median_or_null(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  return report::stats_of(std::move(v)).median;
}

Variant variant_of_run(const Run& run, const RunMetrics& m) {
  Variant v;
  v.label = run.label;
  v.batch_size = run.config_number("train.batch_size");
  v.model = model_name(run.config_number("model.n_layer"), run.config_number("model.n_embd"));
  if (const auto* s = m.stat("tokens_per_s")) v.tokens_per_s = s->median;
  if (const auto* s = m.stat("mfu")) v.mfu = s->median;
  v.val_loss = m.final_val_loss;
  v.energy_j = m.energy_j;
  v.flops_per_j = flops_per_j(run);
  v.tokens_per_j = tokens_per_j(run);
  return v;
}

// A key's value for a config: swept key, else the first point run's config.
std::optional<double> config_value(const rundir::Sweep& s,
                                   const report::SweepConfig& c,
                                   const std::vector<const Run*>& point_runs,
                                   const std::string& key) {
  auto it = std::find(s.keys.begin(), s.keys.end(), key);
  if (it != s.keys.end()) {
    try {
      return std::stod(c.key_values[static_cast<size_t>(it - s.keys.begin())]);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  for (const Run* r : point_runs) {
    if (auto v = r->config_number(key)) return v;
  }
  return std::nullopt;
}

// The parts of a run left out because they were cut short, as warnings naming the run.
void note_cut_parts(const Run& run, const std::string& who, std::vector<std::string>& warnings) {
  for (const auto& w : run.warnings) warnings.push_back(who + ": " + w.text());
}

}  // namespace

std::string no_rows_reason(const std::vector<const rundir::Run*>& runs,
                           config::ProfileLevel needed) {
  const bool ops = needed >= config::ProfileLevel::kOps;
  std::vector<std::string> why;
  for (const rundir::Run* run : runs) {
    const std::string reason = rundir::why_no_rows(*run, needed);
    if (!reason.empty()) why.push_back(runs.size() == 1 ? reason : run->label + ": " + reason);
  }
  const std::string_view file = ops ? rundir::kOps : rundir::kModules;
  if (why.empty()) {
    return fmt::format("no {} in the runs (train with profile.level={})", file,
                       config::name(needed));
  }
  return fmt::format("no {} in the runs: {}", file, fmt::join(why, "; "));
}

PlotInputs load_inputs(const PlotOptions& options) {
  if (options.inputs.empty()) throw UsageError("plot: give at least one run or sweep directory");
  PlotInputs in;
  std::vector<Run> given;
  for (const auto& dir : options.inputs) {
    if (rundir::is_sweep_dir(dir)) {
      in.sweeps.push_back(rundir::load_sweep(dir));
    } else {
      given.push_back(rundir::load_run(dir));
    }
  }
  std::vector<Run*> given_ptrs;
  for (auto& r : given) given_ptrs.push_back(&r);
  rundir::disambiguate_labels(given_ptrs);
  for (const Run& r : given) note_cut_parts(r, r.label, in.warnings);
  // Point runs of every sweep, by index of the sweep point; failures are warnings.
  std::vector<std::vector<std::optional<Run>>> points(in.sweeps.size());
  std::vector<Run> point_runs;
  for (size_t s = 0; s < in.sweeps.size(); ++s) {
    in.configs.push_back(report::aggregate_sweep(in.sweeps[s]));
    for (const auto& pt : in.sweeps[s].points) {
      std::optional<Run> run;
      if (!pt.run_dir.empty() && pt.status == config::RunStatus::kCompleted) {
        try {
          run = rundir::load_run(pt.run_dir);
          note_cut_parts(*run, "sweep point " + pt.point_id, in.warnings);
        } catch (const Error& e) {
          in.warnings.push_back(fmt::format("sweep point {} left out: {}", pt.point_id, e.what()));
        }
      }
      points[s].push_back(run);
    }
  }
  for (size_t s = 0; s < in.sweeps.size(); ++s) {
    for (const auto& c : in.configs[s]) {
      std::vector<const Run*> runs;
      for (size_t i : c.points) {
        if (points[s][i]) runs.push_back(&*points[s][i]);
      }
      Variant v;
      v.label = c.label;
      v.batch_size = config_value(in.sweeps[s], c, runs, "train.batch_size");
      v.model = model_name(config_value(in.sweeps[s], c, runs, "model.n_layer"),
                           config_value(in.sweeps[s], c, runs, "model.n_embd"));
      v.tokens_per_s = c.metrics.at("tokens_per_s");
      v.mfu = c.metrics.at("mfu");
      v.val_loss = c.metrics.at("val_loss");
      v.energy_j = c.metrics.at("energy_j");
      std::vector<double> fpj, tpj;
      for (const Run* r : runs) {
        if (auto x = flops_per_j(*r)) fpj.push_back(*x);
        if (auto x = tokens_per_j(*r)) tpj.push_back(*x);
      }
      v.flops_per_j = median_or_null(fpj);
      v.tokens_per_j = median_or_null(tpj);
      in.variants.push_back(v);
      for (size_t k = 0; k < runs.size(); ++k) {
        Run r = *runs[k];
        r.label = runs.size() > 1 ? fmt::format("{} #{}", c.label, k + 1) : c.label;
        point_runs.push_back(std::move(r));
      }
    }
  }
  std::vector<Run>& drawn = given.empty() ? point_runs : given;
  if (drawn.size() > options.max_runs_per_chart) {
    in.runs_note = fmt::format("per-run charts show the first {} of {} runs",
                               options.max_runs_per_chart, drawn.size());
    drawn.resize(options.max_runs_per_chart);
  }
  for (auto& r : drawn) {
    in.metrics.push_back(report::compute_metrics(r));
    in.runs.push_back(std::move(r));
  }
  if (in.sweeps.empty()) {
    for (size_t i = 0; i < in.runs.size(); ++i) {
      in.variants.push_back(variant_of_run(in.runs[i], in.metrics[i]));
    }
  }
  return in;
}

}  // namespace llmprof::plot::detail
