// Private to src/plot: the inputs every chart draws from, the writer that turns a gnuplot script
// body into an image, and the chart functions, one family per file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llmprof/plot/plot.h"
#include "llmprof/report/metrics.h"
#include "llmprof/rundir/read.h"
#include "llmprof/report/sweep.h"

namespace llmprof::plot::detail {

// One configuration for the cross-run charts (6, 8, 9): a sweep configuration or a run.
struct Variant {
  std::string label;
  std::optional<double> batch_size;
  std::string model;  // "2 x 32" (n_layer x n_embd), or "unknown size"
  std::optional<double> tokens_per_s, mfu, val_loss, energy_j, flops_per_j, tokens_per_j;
};

struct PlotInputs {
  std::vector<rundir::Run> runs;  // drawn by per-run charts: the inputs, else sweep point runs
  std::vector<report::RunMetrics> metrics;
  std::vector<rundir::Sweep> sweeps;
  std::vector<std::vector<report::SweepConfig>> configs;  // per sweep
  std::vector<Variant> variants;  // sweep configurations, or the runs when no sweep is given
  std::string runs_note;          // why some runs are not drawn, empty when all are
  std::vector<std::string> warnings;  // input left out: rows or files cut short, sweep points
};

// Loads runs and sweeps (sweep point runs that fail to load are left out with a warning).
PlotInputs load_inputs(const PlotOptions& options);

// Why no run of runs has the rows of the file profile.level `needed` records, from the levels
// their summaries recorded: "no ops.csv in the runs: a: recorded at profile.level=phases; ..."
// naming each run whose level is known; without any, "no ops.csv in the runs (train with
// profile.level=ops)".
std::string no_rows_reason(const std::vector<const rundir::Run*>& runs,
                           config::ProfileLevel needed);

// Writes .dat and .gp files into the output directory and runs gnuplot on them.
class ChartWriter {
 public:
  ChartWriter(std::string dir, ImageFormat format, std::string gnuplot_path);
  // Writes <file> (a .dat name) with content; returns the name for use in the script.
  std::string data(const std::string& file, const std::string& content) const;
  // Writes <name>.gp (terminal and style preamble + body) and runs gnuplot; throws Error (exit 1)
  // naming the script and gnuplot's message when it fails.
  ChartResult render(const std::string& name,
                     const std::string& body,
                     int width_px = 1000,
                     int height_px = 600) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  ImageFormat format_;
  std::string gnuplot_;
};

// A chart left out, with the reason.
ChartResult skipped(const std::string& name, const std::string& reason);

// A gnuplot double-quoted string literal.
std::string gp_quote(const std::string& text);

// Number for a .dat file: shortest round-trip form, NaN for unknown.
std::string dat(std::optional<double> value);

// Bars: values[row][series]; stacked (one bar per row, series stacked, the total printed on top)
// or clustered (series side by side per row).
struct BarTable {
  std::vector<std::string> rows;
  std::vector<std::string> series;
  std::vector<std::vector<double>> values;
  std::vector<std::string> top_labels;  // stacked: text above each bar; empty = the total
};

// Writes a bar chart through w. Titles and axis labels as given (units in the labels).
ChartResult bar_chart(const ChartWriter& w,
                      const std::string& name,
                      const std::string& title,
                      const std::string& xlabel,
                      const std::string& ylabel,
                      const BarTable& bars,
                      bool stacked);

// One panel of bar_panels: its own title, y axis and clustered bars.
struct BarPanel {
  std::string file_suffix;  // its data file is <name>_<file_suffix>.dat
  std::string title;
  std::string ylabel;  // with its unit
  BarTable bars;
};

// Clustered bar panels side by side under one title (gnuplot multiplot), each with its own y
// axis, so a large quantity does not flatten a small one. Panels with no value are left out.
ChartResult bar_panels(const ChartWriter& w,
                       const std::string& name,
                       const std::string& title,
                       const std::string& xlabel,
                       const std::vector<BarPanel>& panels);

// How category labels on the x axis fit: the "set xtics" options and the canvas size in pixels.
struct XticsLayout {
  std::string options;  // e.g. "nomirror scale 0 rotate by 90 right"
  int width_px = 1000;
  int height_px = 600;
};

// Labels side by side when they fit under a 1000-pixel plot; else turned upright, with the canvas
// widened per label and heightened for the longest one.
XticsLayout xtics_layout(const std::vector<std::string>& labels);

// Module charts (modules.csv): 1 block timing, 2 attention breakdown, 3 MLP breakdown.
std::vector<ChartResult> module_charts(const PlotInputs& in, const ChartWriter& w);

// Per-run charts: 4 phases, 5 loss curves, 10 step-time distribution, 11 memory per phase.
std::vector<ChartResult> run_charts(const PlotInputs& in, const ChartWriter& w);

// Cross-run charts: 6 tokens/s and MFU vs batch size, 7 sweep heatmaps, 8 FLOPs per joule.
std::vector<ChartResult> sweep_charts(const PlotInputs& in, const ChartWriter& w);

// 12: the roofline of each run with ops.csv and both roofs in env.json ("12_roofline", or
// "12_roofline_<n>" when several runs have one).
std::vector<ChartResult> roofline_charts(const PlotInputs& in, const ChartWriter& w);

// 13 and 14 of each data-parallel run (comm_steps.csv and collectives.csv in its top directory):
// the timeline of its median step on every rank ("13_comm_timeline") and each bucket's all-reduce
// hidden behind compute vs exposed ("14_comm_overlap"); "_<n>" after each when several runs have
// them. None for other runs.
std::vector<ChartResult> comm_charts(const PlotInputs& in, const ChartWriter& w);

// 9: radar chart of the best configurations.
ChartResult radar_chart(const PlotInputs& in, const ChartWriter& w);

}  // namespace llmprof::plot::detail
