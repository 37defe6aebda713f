// Cross-run charts: 6 tokens/s and MFU vs batch size (one line per model size), 7 heatmaps of a
// 2-D sweep (val loss, tokens/s), 8 FLOPs per joule vs batch size.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "chart.h"

namespace llmprof::plot::detail {

namespace {

using Metric = std::optional<double> Variant::*;

// Median of metric per (model, batch size), one series per model, sorted by batch size.
std::map<std::string, std::map<double, double>> by_model_and_batch(const std::vector<Variant>& vs,
                                                                   Metric metric) {
  std::map<std::string, std::map<double, std::vector<double>>> groups;
  for (const auto& v : vs) {
    if (v.batch_size && v.*metric) groups[v.model][*v.batch_size].push_back(*(v.*metric));
  }
  std::map<std::string, std::map<double, double>> out;
  for (auto& [model, batches] : groups) {
    for (auto& [b, values] : batches) out[model][b] = report::stats_of(values).median;
  }
  return out;
}

ChartResult versus_batch(const PlotInputs& in,
                         const ChartWriter& w,
                         const std::string& name,
                         Metric metric,
                         double scale,
                         const std::string& title,
                         const std::string& ylabel,
                         const std::string& yformat,
                         const std::string& missing) {
  auto series = by_model_and_batch(in.variants, metric);
  std::set<double> batches;
  bool several_per_point = false;
  for (const auto& [model, points] : series) {
    for (const auto& [b, v] : points) batches.insert(b);
  }
  std::map<std::pair<std::string, double>, int> counts;
  for (const auto& v : in.variants) {
    if (v.batch_size && v.*metric) several_per_point |= ++counts[{v.model, *v.batch_size}] > 1;
  }
  if (series.empty()) return skipped(name, missing);
  if (name.rfind("08", 0) != 0 && batches.size() < 2) {
    return skipped(name,
                   fmt::format("needs runs at 2 or more batch sizes (found {})", batches.size()));
  }
  std::string plots;
  size_t k = 0;
  for (const auto& [model, points] : series) {
    std::string data = "# batch_size value\n";
    for (const auto& [b, v] : points) data += fmt::format("{} {}\n", b, dat(v * scale));
    std::string file = w.data(fmt::format("{}_model{}.dat", name, k), data);
    plots += fmt::format("{}{} using 1:2 with linespoints lt {} title {}", k ? ", \\\n     " : "",
                         gp_quote(file), k + 1, gp_quote("model " + model + " (n_layer x n_embd)"));
    ++k;
  }
  std::string body =
      fmt::format("set title {}\n",
                  gp_quote(title + (several_per_point ? " (median over other settings)" : "")));
  body += "set xlabel \"batch size (sequences per micro-batch)\"\n";
  body += fmt::format("set ylabel {}\nset format y {}\n", gp_quote(ylabel), gp_quote(yformat));
  double lo = *batches.begin(), hi = *batches.rbegin();
  if (lo > 0 && hi / lo >= 4) body += "set logscale x 2\n";
  body += fmt::format("set xrange [{}:{}]\n", lo / 1.3, hi * 1.3);
  body += "set xtics (";
  size_t i = 0;
  for (double b : batches) body += fmt::format("{}\"{}\" {}", i++ ? ", " : "", b, b);
  body += ")\nset yrange [0:*]\nset offsets 0, 0, graph 0.15, 0\n";
  body += "set key inside left top vertical\nset grid xtics ytics lc rgb '#dddddd'\n";
  body += "plot " + plots + "\n";
  return w.render(name, body);
}

// Cell value of the heatmap: the best over the swept keys beyond the first two.
std::optional<double> cell(const std::vector<report::SweepConfig>& configs,
                           const std::string& row,
                           const std::string& col,
                           const std::string& metric) {
  std::optional<double> best;
  for (const auto& c : configs) {
    if (c.key_values[0] != row || c.key_values[1] != col) continue;
    auto v = c.metrics.at(metric);
    if (!v) continue;
    if (!best || (report::higher_is_better(metric) ? *v > *best : *v < *best)) best = v;
  }
  return best;
}

ChartResult heatmap(const rundir::Sweep& s,
                    const std::vector<report::SweepConfig>& configs,
                    const ChartWriter& w,
                    const std::string& name,
                    const std::string& metric,
                    const std::string& what,
                    const std::string& label_format) {
  std::vector<std::string> names = report::short_key_names(s.keys);
  std::vector<std::string> rows = report::key_levels(configs, 0);
  std::vector<std::string> cols = report::key_levels(configs, 1);
  std::string data = "# col_index row_index value\n";
  size_t known = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < cols.size(); ++c) {
      auto v = cell(configs, rows[r], cols[c], metric);
      known += v.has_value();
      data += fmt::format("{} {} {}\n", c, r, dat(v));
    }
  }
  if (known == 0) return skipped(name, "no point of the sweep has " + metric);
  std::string file = w.data(name + ".dat", data);
  std::string body = fmt::format(
      "set title {}\n",
      gp_quote(fmt::format("Sweep {}: {} by {} and {}{}", s.label, what, names[0], names[1],
                           s.keys.size() > 2 ? " (best over other keys)" : "")));
  body += fmt::format("set xlabel {}\nset ylabel {}\n", gp_quote(s.keys[1]), gp_quote(s.keys[0]));
  body += fmt::format("set cblabel {}\n", gp_quote(what));
  body += fmt::format("set xrange [-0.5:{}]\nset yrange [-0.5:{}]\n", cols.size() - 0.5,
                      rows.size() - 0.5);
  body += "set xtics (";
  for (size_t c = 0; c < cols.size(); ++c)
    body += fmt::format("{}{} {}", c ? ", " : "", gp_quote(cols[c]), c);
  body += ") scale 0\nset ytics (";
  for (size_t r = 0; r < rows.size(); ++r)
    body += fmt::format("{}{} {}", r ? ", " : "", gp_quote(rows[r]), r);
  body += ") scale 0\nunset grid\n";
  // Viridis-like palette; for a lower-is-better metric the best cells are the dark ones.
  body +=
      "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21908d', 0.75 '#5dc963', 1 "
      "'#fde725')\n";
  body += "set style fill solid 1.0 noborder\nset style textbox opaque noborder\n";
  body += fmt::format(
      "plot {0} using 1:2:(0.5):(0.5):3 with boxxyerror fc palette notitle, \\\n"
      "     {0} using 1:2:(sprintf({1}, $3)) with labels boxed font \",12\" notitle\n",
      gp_quote(file), gp_quote(label_format));
  return w.render(name, body, 900, 650);
}

}  // namespace

std::vector<ChartResult> sweep_charts(const PlotInputs& in, const ChartWriter& w) {
  std::vector<ChartResult> out;
  const std::string no_data = in.variants.empty() ? "no runs or sweep points"
                                                  : "no run or sweep point has a batch size and ";
  out.push_back(versus_batch(in, w, "06_tokens_per_s_vs_batch", &Variant::tokens_per_s, 1.0,
                             "Throughput vs batch size", "throughput (tokens/s)", "%.0f",
                             no_data + "tokens/s"));
  out.push_back(versus_batch(in, w, "06_mfu_vs_batch", &Variant::mfu, 100.0,
                             "Model FLOPs utilisation vs batch size", "MFU (% of peak FLOP/s)",
                             "%.0f%%", no_data + "MFU"));
  size_t two_d = 0;
  for (size_t s = 0; s < in.sweeps.size(); ++s) {
    const auto& sweep = in.sweeps[s];
    if (sweep.keys.size() < 2) continue;
    std::string suffix = in.sweeps.size() > 1 ? "_" + sweep.label : "";
    out.push_back(heatmap(sweep, in.configs[s], w, "07_heatmap_val_loss" + suffix, "val_loss",
                          "val loss (nats/token)", "%.3f"));
    out.push_back(heatmap(sweep, in.configs[s], w, "07_heatmap_tokens_per_s" + suffix,
                          "tokens_per_s", "throughput (tokens/s)", "%.0f"));
    ++two_d;
  }
  if (two_d == 0) {
    std::string why = in.sweeps.empty() ? "needs a sweep directory with 2 swept keys"
                                        : "the sweep has fewer than 2 swept keys";
    out.push_back(skipped("07_heatmap_val_loss", why));
    out.push_back(skipped("07_heatmap_tokens_per_s", why));
  }
  // An estimate is labelled as one wherever it appears: here in the title and the axis.
  bool estimated = false;
  for (const auto& run : in.runs) estimated = estimated || (run.energy && run.energy->estimated);
  for (const auto& sweep : in.sweeps) estimated = estimated || sweep.energy_estimated;
  out.push_back(versus_batch(in, w, "08_flops_per_joule_vs_batch", &Variant::flops_per_j, 1.0,
                             estimated ? "Energy efficiency vs batch size (ESTIMATED energy: "
                                         "energy.cpu_tdp_w x CPU utilisation)"
                                       : "Energy efficiency vs batch size",
                             estimated ? "FLOPs per joule, estimated (FLOP/J)"
                                       : "FLOPs per joule (FLOP/J)",
                             "%.1s%c",
                             "no energy measured (summary.json energy or steps.csv "
                             "energy_j) for any run with a batch size"));
  return out;
}

}  // namespace llmprof::plot::detail
