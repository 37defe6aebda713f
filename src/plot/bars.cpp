// Stacked and clustered bar charts through gnuplot's histogram style, alone or as panels.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "chart.h"

namespace llmprof::plot::detail {

namespace {

// Drops series that are zero or unknown in every row (e.g. "other" when the parts add up).
BarTable without_empty_series(const BarTable& bars) {
  BarTable kept;
  kept.rows = bars.rows;
  kept.top_labels = bars.top_labels;
  kept.values.resize(bars.rows.size());
  for (size_t s = 0; s < bars.series.size(); ++s) {
    bool any = false;
    for (const auto& row : bars.values) any |= std::isfinite(row[s]) && row[s] != 0;
    if (!any) continue;
    kept.series.push_back(bars.series[s]);
    for (size_t r = 0; r < bars.rows.size(); ++r) kept.values[r].push_back(bars.values[r][s]);
  }
  return kept;
}

}  // namespace

XticsLayout xtics_layout(const std::vector<std::string>& labels) {
  size_t total = 0, longest = 0;
  for (const auto& l : labels) {
    total += l.size() + 2;
    longest = std::max(longest, l.size());
  }
  XticsLayout layout;
  // About 90 characters fit side by side under a 1000-pixel-wide plot at 11 pt.
  if (total <= 90) {
    layout.options = "nomirror scale 0";
    return layout;
  }
  // Upright labels: ~40 px per category, ~6 px per character of the longest label below the plot.
  layout.options = "nomirror scale 0 rotate by 90 right";
  layout.width_px = std::clamp(static_cast<int>(150 + 40 * labels.size()), 1000, 2400);
  layout.height_px = 520 + 6 * static_cast<int>(longest);
  return layout;
}

namespace {

// One bar plot: its .dat written as `file`, and the gnuplot commands that draw it (title, labels,
// ranges, key, xtics, plot) with the canvas they want; nullopt when every value is zero or unknown.
struct BarPlot {
  std::string body;
  XticsLayout layout;
};

std::optional<BarPlot> bar_plot(const ChartWriter& w,
                                const std::string& file_name,
                                const std::string& title,
                                const std::string& xlabel,
                                const std::string& ylabel,
                                const BarTable& all_series,
                                bool stacked) {
  BarTable bars = without_empty_series(all_series);
  if (bars.series.empty() || bars.rows.empty()) return std::nullopt;
  std::string data = "# label";
  for (const auto& s : bars.series) data += " " + gp_quote(s);
  data += " total top_label\n";
  double max_total = 0;
  for (size_t r = 0; r < bars.rows.size(); ++r) {
    data += gp_quote(bars.rows[r]);
    double total = 0, top = 0;
    for (double v : bars.values[r]) {
      data += " " + dat(v);
      if (std::isfinite(v)) {
        total += v;
        top = std::max(top, v);
      }
    }
    std::string label =
        r < bars.top_labels.size() ? bars.top_labels[r] : fmt::format("{:.4g}", total);
    data += " " + dat(total) + " " + gp_quote(label) + "\n";
    max_total = std::max(max_total, stacked ? total : top);
  }
  std::string file = w.data(file_name, data);
  std::string body = fmt::format("set title {}\nset xlabel {}\nset ylabel {}\n", gp_quote(title),
                                 gp_quote(xlabel), gp_quote(ylabel));
  body += "set style data histograms\n";
  body += stacked ? "set style histogram rowstacked\nset boxwidth 0.6 relative\n"
                  : "set style histogram clustered gap 1\n";
  body += "set style fill solid 0.85 border rgb '#333333'\n";
  // Bars sit at x = 0, 1, ...; headroom above the tallest for the total labels and the key.
  body += fmt::format("set xrange [-0.6:{}]\n", static_cast<double>(bars.rows.size()) - 0.4);
  body += fmt::format("set yrange [0:{}]\n", max_total > 0 ? max_total * 1.25 : 1.0);
  XticsLayout layout = xtics_layout(bars.rows);
  // A short key fits inside above the bars; a long one goes below, on a taller canvas.
  size_t longest = 0;
  for (const auto& s : bars.series) longest = std::max(longest, s.size());
  if (bars.series.size() <= 8 && longest <= 28) {
    body += "set key inside left top horizontal\n";
  } else {
    body += "set key below center horizontal reverse Left samplen 2 height 1.5\n";
    size_t lines = longest > 40 ? bars.series.size() : (bars.series.size() + 1) / 2;
    layout.height_px += static_cast<int>(lines) * 18;
  }
  body += "set xtics " + layout.options + "\n";
  body += "plot ";
  for (size_t s = 0; s < bars.series.size(); ++s) {
    body += fmt::format("{}{} using {}{} title {} lt {}", s ? ", \\\n     " : "",
                        s ? "''" : gp_quote(file), s + 2, s ? "" : ":xtic(1)",
                        gp_quote(bars.series[s]), s + 1);
  }
  if (stacked) {
    size_t total_col = bars.series.size() + 2;
    body += fmt::format(", \\\n     '' using 0:{}:{} with labels offset 0,0.8 notitle", total_col,
                        total_col + 1);
  }
  body += "\n";
  return BarPlot{body, layout};
}

}  // namespace

ChartResult bar_chart(const ChartWriter& w,
                      const std::string& name,
                      const std::string& title,
                      const std::string& xlabel,
                      const std::string& ylabel,
                      const BarTable& bars,
                      bool stacked) {
  auto plot = bar_plot(w, name + ".dat", title, xlabel, ylabel, bars, stacked);
  if (!plot) return skipped(name, "every value is zero or unknown");
  return w.render(name, plot->body, plot->layout.width_px, plot->layout.height_px);
}

ChartResult bar_panels(const ChartWriter& w,
                       const std::string& name,
                       const std::string& title,
                       const std::string& xlabel,
                       const std::vector<BarPanel>& panels) {
  std::vector<BarPlot> plots;
  for (const auto& p : panels) {
    auto plot = bar_plot(w, name + "_" + p.file_suffix + ".dat", p.title, xlabel, p.ylabel, p.bars,
                         /*stacked=*/false);
    if (plot) plots.push_back(std::move(*plot));
  }
  if (plots.empty()) return skipped(name, "every value is zero or unknown");
  // Side by side, each panel with its own y axis; a panel keeps about 700 px of width.
  const int n = static_cast<int>(plots.size());
  int width_px = 0, height_px = 0;
  for (const auto& p : plots) {
    width_px = std::max(width_px, p.layout.width_px);
    height_px = std::max(height_px, p.layout.height_px);
  }
  std::string body = fmt::format("set multiplot layout 1,{} title {}\n", n, gp_quote(title));
  for (const auto& p : plots) body += p.body;
  body += "unset multiplot\n";
  return w.render(name, body, std::max(width_px, 700 * n), height_px + 30);
}

}  // namespace llmprof::plot::detail
