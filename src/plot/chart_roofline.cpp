// 12: the roofline of a run (ops.csv against env.json's two roofs): log-log, arithmetic intensity
// against achieved GFLOP/s, the memory and compute roofs meeting at the ridge point, one point per
// op sized by its time per step and coloured by its bound, the biggest labelled where their labels
// overlap nothing (label_layout.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "chart.h"
#include "label_layout.h"

namespace llmprof::plot::detail {

namespace {

constexpr size_t kLabelled = 12;  // ops with the most time get a label

// The canvas and the plot area inside it, fixed (set [lrtb]margin at screen) so that a data point's
// pixel is known here and labels can be placed around it.
constexpr int kWidthPx = 1000, kHeightPx = 650;
constexpr double kLeft = 0.09, kRight = 0.97, kBottom = 0.11, kTop = 0.90;  // screen fractions
// Pixels per unit of gnuplot's pointsize for pt 7 (a filled circle's radius) and the label font
// (",9": DejaVu Sans 9 pt), measured on pngcairo's output; svg draws them alike.
constexpr double kRadiusPxPerPs = 3.0;
constexpr TextMetrics kLabelFont{7.0, 14};
// The key (bottom right, terminal font 11 pt): width per character of its longest title plus the
// line sample, height per entry.
constexpr double kKeyCharPx = 7.0, kKeySamplePx = 70, kKeyEntryPx = 17;

// Log-log axes in canvas pixels (y down).
struct Axes {
  double x_lo, x_hi, y_lo, y_hi;
  double x_px(double x) const {
    return kWidthPx * (kLeft + (kRight - kLeft) * std::log(x / x_lo) / std::log(x_hi / x_lo));
  }
  double y_px(double y) const {
    return kHeightPx *
           (1 - (kBottom + (kTop - kBottom) * std::log(y / y_lo) / std::log(y_hi / y_lo)));
  }
  Box area() const {
    return {kLeft * kWidthPx, (1 - kTop) * kHeightPx, kRight * kWidthPx, (1 - kBottom) * kHeightPx};
  }
};

// "set label" lines for the labelled ops, placed clear of each other, of every marker and of the
// key; a thin leader line from an op to a label set further out.
std::string label_lines(const std::vector<Marker>& markers,
                        const std::vector<std::array<double, 2>>& at,
                        const Axes& axes,
                        const std::vector<Box>& obstacles) {
  std::string out;
  const std::vector<LabelPlace> places = place_labels(markers, axes.area(), obstacles, kLabelFont);
  for (size_t i = 0; i < markers.size(); ++i) {
    if (markers[i].label.empty()) continue;
    const LabelPlace& p = places[i];
    out += fmt::format("set label {} at screen {:.5f}, {:.5f} center font \",9\" front\n",
                       gp_quote(markers[i].label), p.x_px / kWidthPx, 1 - p.y_px / kHeightPx);
    if (!p.far) continue;
    // To the label box's nearest edge point, not through its text.
    const double ex = std::clamp(markers[i].x_px, p.box.left, p.box.right);
    const double ey = std::clamp(markers[i].y_px, p.box.top, p.box.bottom);
    out += fmt::format(
        "set arrow from first {}, {} to screen {:.5f}, {:.5f} nohead back lw 0.6 "
        "lc rgb \"gray55\"\n",
        at[i][0], at[i][1], ex / kWidthPx, 1 - ey / kHeightPx);
  }
  return out;
}

int bound_index(const std::string& bound) {
  return bound == "compute" ? 1 : bound == "memory" ? 2 : bound == "overhead" ? 3 : 4;
}

std::string short_op(const std::string& op) {
  return op.rfind("aten::", 0) == 0 ? op.substr(6) : op;
}

// The ops drawn: those with counted FLOPs and bytes and a self time, the longest first.
std::vector<const rundir::OpRow*> drawn_ops(const rundir::Run& run) {
  std::vector<const rundir::OpRow*> ops;
  for (const auto& o : run.ops) {
    const auto& r = o.roofline;
    if (r.arithmetic_intensity && *r.arithmetic_intensity > 0 && r.achieved_gflops_per_s &&
        *r.achieved_gflops_per_s > 0 && o.self_ms && *o.self_ms > 0) {
      ops.push_back(&o);
    }
  }
  std::sort(ops.begin(), ops.end(), [](const rundir::OpRow* a, const rundir::OpRow* b) {
    return *a->self_ms > *b->self_ms;
  });
  return ops;
}

// The two roofs and where they meet.
struct Roofs {
  double peak_gflops;  // GFLOP/s
  double peak_gbps;    // GB/s
  double ridge;        // FLOP/byte
  std::string key_title() const {
    return fmt::format("roofs: {:.4g} GB/s x intensity, {:.4g} GFLOP/s", peak_gbps, peak_gflops);
  }
  std::string ridge_text() const { return fmt::format("ridge {:.3g} FLOP/B", ridge); }
};

// Every op and the ridge point, with a margin.
Axes roofline_axes(const std::vector<const rundir::OpRow*>& ops, const Roofs& roofs) {
  double x_lo = roofs.ridge, x_hi = roofs.ridge, y_lo = roofs.peak_gflops;
  for (const rundir::OpRow* op : ops) {
    x_lo = std::min(x_lo, *op->roofline.arithmetic_intensity);
    x_hi = std::max(x_hi, *op->roofline.arithmetic_intensity);
    y_lo = std::min(y_lo, *op->roofline.achieved_gflops_per_s);
  }
  return Axes{x_lo / 4, x_hi * 4, y_lo / 4, roofs.peak_gflops * 3};
}

// One point per op: the data file's rows, the markers the labels avoid, their data coordinates
// and the bounds present (bound_index).
struct RooflinePoints {
  std::string rows = "# intensity_flop_per_byte achieved_gflops_per_s point_size bound\n";
  std::vector<Marker> markers;
  std::vector<std::array<double, 2>> at;
  std::array<bool, 5> has_bound{};
};

RooflinePoints roofline_points(const std::vector<const rundir::OpRow*>& ops, const Axes& axes) {
  RooflinePoints p;
  const double max_ms = *ops.front()->self_ms;
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& r = ops[i]->roofline;
    const double size = 0.6 + 3.0 * std::sqrt(*ops[i]->self_ms / max_ms);
    const int b = bound_index(r.bound);
    p.has_bound[b] = true;
    p.rows += fmt::format("{} {} {} {}\n", dat(r.arithmetic_intensity),
                          dat(r.achieved_gflops_per_s), dat(size), b);
    p.at.push_back({*r.arithmetic_intensity, *r.achieved_gflops_per_s});
    p.markers.push_back({axes.x_px(p.at.back()[0]), axes.y_px(p.at.back()[1]),
                         kRadiusPxPerPs * size, i < kLabelled ? short_op(ops[i]->op) : ""});
  }
  return p;
}

// The axes, margins, labels, the roof function and the ridge's mark.
std::string roofline_settings(const Axes& axes, const Roofs& roofs) {
  return fmt::format(
      "set logscale xy\n"
      "set xrange [{}:{}]\nset yrange [{}:{}]\n"
      "set lmargin at screen {}\nset rmargin at screen {}\n"
      "set bmargin at screen {}\nset tmargin at screen {}\n"
      "set xlabel \"arithmetic intensity (FLOP/byte; bytes counted as a lower bound)\"\n"
      "set ylabel \"achieved GFLOP/s (its own FLOPs / modelled self time)\"\n"
      "set key bottom right\n"
      "roof(x) = x * {} < {} ? x * {} : {}\n"
      "set arrow from {}, graph 0 to {}, graph 1 nohead dt 2 lc rgb \"gray50\"\n"
      "set label {} at {}, {} left offset 0.5,-1 textcolor rgb \"gray30\"\n"
      "set samples 400\n",
      axes.x_lo, axes.x_hi, axes.y_lo, axes.y_hi, kLeft, kRight, kBottom, kTop, roofs.peak_gbps,
      roofs.peak_gflops, roofs.peak_gbps, roofs.peak_gflops, roofs.ridge, roofs.ridge,
      gp_quote(roofs.ridge_text()), roofs.ridge, roofs.peak_gflops);
}

// The plot command: the roofs, then a series for each bound present only: gnuplot warns of an
// empty one ("Skipping data file with no valid points"), which plot and the HTML report would
// pass on.
std::string plot_command(const std::string& file,
                         const Roofs& roofs,
                         const RooflinePoints& points) {
  const char* kColours[] = {"#1f77b4", "#d62728", "#7f7f7f", "#bcbd22"};
  const char* kBounds[] = {"compute-bound", "memory-bound", "overhead-bound", "bound unknown"};
  std::string plot = fmt::format("plot roof(x) with lines lw 2 lc rgb \"black\" title {}",
                                 gp_quote(roofs.key_title()));
  for (int b = 1; b <= 4; ++b) {
    if (!points.has_bound[b]) continue;
    plot += fmt::format(
        ", \\\n     {} using 1:($4=={}?$2:1/0):3 with points pt 7 ps variable lc rgb \"{}\" "
        "title \"{}\"",
        gp_quote(file), b, kColours[b - 1], kBounds[b - 1]);
  }
  return plot;
}

// What the op labels keep clear of besides the points: the key and the ridge's label.
std::vector<Box> fixed_boxes(const Axes& axes, const Roofs& roofs, const RooflinePoints& points) {
  const auto key_entries = static_cast<double>(
      1 + std::count(points.has_bound.begin() + 1, points.has_bound.end(), true));
  const Box area = axes.area();
  const double key_w = kKeySamplePx + kKeyCharPx * static_cast<double>(roofs.key_title().size());
  const Box key{area.right - key_w, area.bottom - kKeyEntryPx * key_entries, area.right,
                area.bottom};
  // The ridge's own label: at (ridge, peak), offset by half a character right and a line down.
  const double ridge_x = axes.x_px(roofs.ridge) + kKeyCharPx / 2;
  const double ridge_y = axes.y_px(roofs.peak_gflops);
  const Box ridge_box{ridge_x, ridge_y + kKeyEntryPx / 2,
                      ridge_x + kKeyCharPx * static_cast<double>(roofs.ridge_text().size()),
                      ridge_y + 1.5 * kKeyEntryPx};
  return {key, ridge_box};
}

ChartResult roofline_chart(const rundir::Run& run, const std::string& name, const ChartWriter& w) {
  if (run.ops.empty()) {
    const std::string why = rundir::why_no_rows(run, config::ProfileLevel::kOps);
    return skipped(name,
                   run.label + ": no ops.csv (" + (why.empty() ? "profile.level=ops" : why) + ")");
  }
  if (!run.peak_flops_per_s || !run.peak_bytes_per_s || *run.peak_bytes_per_s <= 0) {
    return skipped(name, run.label + ": env.json has no peak_flops and peak_bandwidth");
  }
  const std::vector<const rundir::OpRow*> ops = drawn_ops(run);
  if (ops.empty()) return skipped(name, run.label + ": no op with counted FLOPs and bytes");
  const double peak_gflops = *run.peak_flops_per_s * 1e-9;
  const double peak_gbps = *run.peak_bytes_per_s * 1e-9;
  const Roofs roofs{peak_gflops, peak_gbps, peak_gflops / peak_gbps};
  const Axes axes = roofline_axes(ops, roofs);
  const RooflinePoints points = roofline_points(ops, axes);
  const std::string file = w.data(name + ".dat", points.rows);
  const size_t left_out = run.ops.size() - ops.size();
  std::string body = roofline_settings(axes, roofs);
  body += fmt::format(
      "set title {}\n",
      gp_quote(fmt::format("Roofline: {} ({} ops with FLOPs and bytes; {} without are left out; "
                           "points sized by time per step)",
                           run.label, ops.size(), left_out)));
  body += label_lines(points.markers, points.at, axes, fixed_boxes(axes, roofs, points));
  body += plot_command(file, roofs, points) + "\n";
  return w.render(name, body, kWidthPx, kHeightPx);
}

}  // namespace

std::vector<ChartResult> roofline_charts(const PlotInputs& in, const ChartWriter& w) {
  std::vector<ChartResult> out;
  std::vector<const rundir::Run*> with, all;
  for (const auto& run : in.runs) {
    if (!run.ops.empty()) with.push_back(&run);
    all.push_back(&run);
  }
  if (with.empty())
    return {skipped("12_roofline", no_rows_reason(all, config::ProfileLevel::kOps))};
  for (size_t i = 0; i < with.size(); ++i) {
    const std::string name =
        with.size() == 1 ? "12_roofline" : fmt::format("12_roofline_{}", i + 1);
    out.push_back(roofline_chart(*with[i], name, w));
  }
  return out;
}

}  // namespace llmprof::plot::detail
