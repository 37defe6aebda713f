// Per-run charts: 4 phase breakdown, 5 loss curves, 10 step-time distribution, 11 memory per phase.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "chart.h"

namespace llmprof::plot::detail {

namespace {

std::string labels_note(const PlotInputs& in) {
  return in.runs_note.empty() ? "" : " (" + in.runs_note + ")";
}

ChartResult phase_chart(const PlotInputs& in, const ChartWriter& w) {
  const char* name = "04_phases";
  BarTable t;
  t.series = {"data", "forward", "backward", "optimizer", "unattributed", "eval (per step)"};
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const auto& m = in.metrics[i];
    const report::Stats* step = m.stat("step_ms");
    if (step == nullptr) continue;
    std::vector<double> v;
    double sum = 0;
    for (const auto& p : report::phase_names()) {
      const report::Stats* s = m.stat(p + "_ms");
      v.push_back(s ? s->median : 0.0);
      sum += v.back();
    }
    v.push_back(std::max(0.0, step->median - sum));
    v.push_back(m.steps_completed > 0 ? m.eval_total_ms / static_cast<double>(m.steps_completed)
                                      : 0.0);
    t.rows.push_back(in.runs[i].label);
    t.values.push_back(v);
  }
  if (t.rows.empty()) return skipped(name, "no run has step_ms values");
  // Runs more than 10x apart in step time cannot share a ms axis: show shares, label ms.
  double lo = 1e300, hi = 0;
  std::vector<double> totals;
  for (const auto& v : t.values) {
    double total = 0;
    for (double x : v) total += x;
    totals.push_back(total);
    lo = std::min(lo, total);
    hi = std::max(hi, total);
  }
  std::string title = "Step phases per run (medians after warm-up; eval amortised per step)";
  if (t.rows.size() > 1 && lo > 0 && hi / lo > 10) {
    for (size_t r = 0; r < t.values.size(); ++r) {
      for (double& x : t.values[r]) x = x / totals[r] * 100;
      t.top_labels.push_back(fmt::format("{:.4g} ms", totals[r]));
    }
    return bar_chart(w, name, title + labels_note(in), "run",
                     "share of step + amortised eval (%); total above each bar", t, true);
  }
  return bar_chart(w, name, title + labels_note(in), "run", "time per step (ms)", t, true);
}

ChartResult loss_chart(const PlotInputs& in, const ChartWriter& w) {
  const char* name = "05_loss_curves";
  std::string body, plots;
  size_t drawn = 0, entries = 0, longest = 0;
  double max_step = 0;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const auto& run = in.runs[i];
    if (rundir::present(run.steps, "loss").empty()) continue;
    std::string train = "# step train_loss\n";
    for (const rundir::StepRow& r : run.steps) {
      train += dat(static_cast<double>(r.step)) + " " + dat(r.loss) + "\n";
      max_step = std::max(max_step, static_cast<double>(r.step));
    }
    std::string train_file = w.data(fmt::format("{}_run{}_train.dat", name, i), train);
    // One run: "train" and "val" entries; several: one entry per run, val shares its colour.
    bool several = in.runs.size() > 1;
    plots += fmt::format("{}{} using 1:2 with lines lt {} lw 1.5 title {}",
                         plots.empty() ? "" : ", \\\n     ", gp_quote(train_file), i + 1,
                         gp_quote(several ? run.label : "train (step loss)"));
    ++entries;
    longest = std::max(longest, run.label.size());
    std::string val = "# step val_loss\n";
    size_t n_val = 0;
    for (const auto& e : run.evals) {
      if (e.split != "val") continue;
      val += fmt::format("{} {}\n", e.step, dat(e.loss));
      ++n_val;
    }
    if (n_val > 0) {
      std::string val_file = w.data(fmt::format("{}_run{}_val.dat", name, i), val);
      plots += fmt::format(", \\\n     {} using 1:2 with linespoints lt {} dt 2 pt 7 ps 1.3 {}",
                           gp_quote(val_file), i + 1,
                           several ? std::string("notitle") : "title \"val (eval)\"");
      entries += several ? 0 : 1;
    }
    ++drawn;
  }
  if (drawn == 0) return skipped(name, "no steps.csv with step and loss columns");
  std::string what = in.runs.size() == 1 ? ": " + in.runs[0].label
                                         : " (solid: train step loss; dashed with dots: val eval)";
  body += fmt::format("set title {}\n", gp_quote("Loss curves" + what + labels_note(in)));
  body += "set xlabel \"optimizer step\"\nset ylabel \"cross-entropy loss (nats/token)\"\n";
  body += "set key below center horizontal reverse Left samplen 2 height 1.5\n";
  body += "set grid xtics ytics lc rgb '#dddddd'\n";
  if (max_step <= 10) body += "set xtics 1\n";
  body += "plot " + plots + "\n";
  // The key below takes about 18 px per line (two entries a line when they are short): grow the
  // canvas rather than shrink the plot.
  size_t key_lines = longest > 40 ? entries : (entries + 1) / 2;
  return w.render(name, body, 1000,
                  600 + static_cast<int>(key_lines > 4 ? (key_lines - 4) * 18 : 0));
}

ChartResult step_time_chart(const PlotInputs& in, const ChartWriter& w) {
  const char* name = "10_step_time_distribution";
  std::string plots, xtics;
  size_t k = 0;
  std::vector<std::string> labels;
  double lo = 1e300, hi = 0;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    auto values =
        rundir::present(in.runs[i].steps, "step_ms", static_cast<size_t>(in.metrics[i].warmup_excluded));
    if (values.size() < 2) continue;
    std::string data = "# step_ms after warm-up\n";
    for (double v : values) {
      data += dat(v) + "\n";
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    ++k;
    std::string file = w.data(fmt::format("{}_run{}.dat", name, i), data);
    plots += fmt::format("{}{} using ({}):1 lt {} notitle", plots.empty() ? "" : ", \\\n     ",
                         gp_quote(file), k, k);
    xtics += fmt::format("{}{} {}", xtics.empty() ? "" : ", ", gp_quote(in.runs[i].label), k);
    labels.push_back(in.runs[i].label);
  }
  if (k == 0) return skipped(name, "no run has 2 or more steps after warm-up");
  std::string body = fmt::format(
      "set title {}\n",
      gp_quote("Step time distribution (after warm-up; box = p25-p75, whiskers 1.5 IQR)" +
               labels_note(in)));
  body += "set xlabel \"run\"\nset ylabel \"step time (ms)\"\n";
  body += "set style data boxplot\nset style boxplot outliers pointtype 7\n";
  body += "set style fill solid 0.35 border -1\nset boxwidth 0.5\n";
  body += fmt::format("set xrange [0.4:{}]\n", static_cast<double>(k) + 0.6);
  // Log scale when the spread covers more than a decade, so a few slow steps do not flatten it.
  if (lo > 0 && hi / lo > 10) body += "set logscale y\n";
  XticsLayout layout = xtics_layout(labels);
  body += "set xtics " + layout.options + " (" + xtics + ")\n";
  body += "plot " + plots + "\n";
  return w.render(name, body, layout.width_px, layout.height_px);
}

// The unit a panel of byte figures reads best in: KiB, MiB or GiB by its largest value.
std::pair<double, const char*> byte_unit(const std::vector<std::vector<double>>& rows) {
  double top = 0;
  for (const auto& row : rows) {
    for (double v : row) {
      if (std::isfinite(v)) top = std::max(top, v);
    }
  }
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  if (top >= kGiB) return {kGiB, "GiB"};
  if (top >= kMiB) return {kMiB, "MiB"};
  return {kKiB, "KiB"};
}

// Scales a panel's byte values to its unit; returns the unit's name.
const char* in_unit(BarTable& t) {
  auto [div, unit] = byte_unit(t.values);
  for (auto& row : t.values) {
    for (double& v : row) v /= div;
  }
  return unit;
}

// Two panels, each on its own axis: allocated memory (LibTorch's allocator) beside process RSS,
// which holds the libraries and data as well and is often 30x larger (265 MiB against 8 MiB).
ChartResult memory_chart(const PlotInputs& in, const ChartWriter& w) {
  const char* name = "11_memory_per_phase";
  std::vector<size_t> with;
  std::vector<std::string> phases;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    if (in.metrics[i].memory_phases.empty()) continue;
    with.push_back(i);
    for (const auto& p : in.metrics[i].memory_phases) {
      if (std::find(phases.begin(), phases.end(), p) == phases.end()) phases.push_back(p);
    }
  }
  if (with.empty()) return skipped(name, "no memory.csv in the runs");
  auto bytes = [](const std::optional<double>& b) { return b ? *b : std::nan(""); };
  BarTable alloc, rss;
  alloc.rows = rss.rows = phases;
  if (with.size() == 1) {
    alloc.series = {"peak allocated", "end allocated (median)"};
    rss.series = {"peak RSS"};
    const auto& m = in.metrics[with[0]];
    for (const auto& p : phases) {
      const auto& pm = m.memory.at(p);
      alloc.values.push_back({bytes(pm.peak_allocated_bytes), bytes(pm.end_allocated_bytes)});
      rss.values.push_back({bytes(pm.rss_bytes)});
    }
  } else {
    for (size_t i : with) alloc.series.push_back(in.runs[i].label);
    rss.series = alloc.series;
    for (const auto& p : phases) {
      std::vector<double> a, r;
      for (size_t i : with) {
        auto it = in.metrics[i].memory.find(p);
        const bool has = it != in.metrics[i].memory.end();
        a.push_back(has ? bytes(it->second.peak_allocated_bytes) : std::nan(""));
        r.push_back(has ? bytes(it->second.rss_bytes) : std::nan(""));
      }
      alloc.values.push_back(a);
      rss.values.push_back(r);
    }
  }
  const bool one = with.size() == 1;
  const char* alloc_unit = in_unit(alloc);
  const char* rss_unit = in_unit(rss);
  std::vector<BarPanel> panels = {
      {"allocated", one ? "allocated by LibTorch: peak and end of phase" : "peak allocated",
       fmt::format("allocated by LibTorch ({})", alloc_unit), alloc},
      {"rss", one ? "process RSS: peak" : "peak process RSS",
       fmt::format("process RSS ({})", rss_unit), rss}};
  std::string who = one ? ": " + in.runs[with[0]].label : " (per run)";
  return bar_panels(w, name, "Memory per phase" + who + labels_note(in), "phase", panels);
}

}  // namespace

std::vector<ChartResult> run_charts(const PlotInputs& in, const ChartWriter& w) {
  if (in.runs.empty()) {
    return {skipped("04_phases", "no runs"), skipped("05_loss_curves", "no runs"),
            skipped("10_step_time_distribution", "no runs"),
            skipped("11_memory_per_phase", "no runs")};
  }
  return {phase_chart(in, w), loss_chart(in, w), step_time_chart(in, w), memory_chart(in, w)};
}

}  // namespace llmprof::plot::detail
