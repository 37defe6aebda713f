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

ChartResult roofline_chart(const rundir::Run& run, const std::string& name, const ChartWriter& w) {
  if (run.ops.empty()) {
    const std::string why = rundir::why_no_rows(run, config::ProfileLevel::kOps);
    return skipped(name,
                   run.label + ": no ops.csv (" + (why.empty() ? "profile.level=ops" : why) + ")");
  }
  if (!run.peak_flops_per_s || !run.peak_bytes_per_s || *run.peak_bytes_per_s <= 0) {
    return skipped(name, run.label + ": env.json has no peak_flops and peak_bandwidth");
  }
  std::vector<const rundir::OpRow*> ops;
  for (const auto& o : run.ops) {
    const auto& r = o.roofline;
    if (r.arithmetic_intensity && *r.arithmetic_intensity > 0 && r.achieved_gflops_per_s &&
        *r.achieved_gflops_per_s > 0 && o.self_ms && *o.self_ms > 0) {
      ops.push_back(&o);
    }
  }
  if (ops.empty()) return skipped(name, run.label + ": no op with counted FLOPs and bytes");
  std::sort(ops.begin(), ops.end(), [](const rundir::OpRow* a, const rundir::OpRow* b) {
    return *a->self_ms > *b->self_ms;
  });
  const double peak_gflops = *run.peak_flops_per_s * 1e-9;
  const double peak_gbps = *run.peak_bytes_per_s * 1e-9;
  const double ridge = peak_gflops / peak_gbps;
  const double max_ms = *ops.front()->self_ms;
  double x_lo = ridge, x_hi = ridge, y_lo = peak_gflops;
  for (const rundir::OpRow* op : ops) {
    x_lo = std::min(x_lo, *op->roofline.arithmetic_intensity);
    x_hi = std::max(x_hi, *op->roofline.arithmetic_intensity);
    y_lo = std::min(y_lo, *op->roofline.achieved_gflops_per_s);
  }
  const Axes axes{x_lo / 4, x_hi * 4, y_lo / 4, peak_gflops * 3};
  std::string rows = "# intensity_flop_per_byte achieved_gflops_per_s point_size bound\n";
  std::vector<Marker> markers;
  std::vector<std::array<double, 2>> at;
  std::array<bool, 5> has_bound{};
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& r = ops[i]->roofline;
    const double size = 0.6 + 3.0 * std::sqrt(*ops[i]->self_ms / max_ms);
    const int b = bound_index(r.bound);
    has_bound[b] = true;
    rows += fmt::format("{} {} {} {}\n", dat(r.arithmetic_intensity), dat(r.achieved_gflops_per_s),
                        dat(size), b);
    at.push_back({*r.arithmetic_intensity, *r.achieved_gflops_per_s});
    markers.push_back({axes.x_px(at.back()[0]), axes.y_px(at.back()[1]), kRadiusPxPerPs * size,
                       i < kLabelled ? short_op(ops[i]->op) : ""});
  }
  const std::string file = w.data(name + ".dat", rows);
  const size_t left_out = run.ops.size() - ops.size();
  std::string body = fmt::format(
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
      axes.x_lo, axes.x_hi, axes.y_lo, axes.y_hi, kLeft, kRight, kBottom, kTop, peak_gbps,
      peak_gflops, peak_gbps, peak_gflops, ridge, ridge,
      gp_quote(fmt::format("ridge {:.3g} FLOP/B", ridge)), ridge, peak_gflops);

  body += fmt::format(
      "set title {}\n",
      gp_quote(fmt::format("Roofline: {} ({} ops with FLOPs and bytes; {} without are left out; "
                           "points sized by time per step)",
                           run.label, ops.size(), left_out)));
  const char* kColours[] = {"#1f77b4", "#d62728", "#7f7f7f", "#bcbd22"};
  const char* kBounds[] = {"compute-bound", "memory-bound", "overhead-bound", "bound unknown"};
  const std::string roofs =
      fmt::format("roofs: {:.4g} GB/s x intensity, {:.4g} GFLOP/s", peak_gbps, peak_gflops);
  std::string plot =
      fmt::format("plot roof(x) with lines lw 2 lc rgb \"black\" title {}", gp_quote(roofs));
  size_t key_entries = 1;
  for (int b = 1; b <= 4; ++b) {
    // A series for each bound present only: gnuplot warns of an empty one ("Skipping data file
    // with no valid points"), which plot and the HTML report would pass on.
    if (!has_bound[b]) continue;
    ++key_entries;
    plot += fmt::format(
        ", \\\n     {} using 1:($4=={}?$2:1/0):3 with points pt 7 ps variable lc rgb \"{}\" "
        "title \"{}\"",
        gp_quote(file), b, kColours[b - 1], kBounds[b - 1]);
  }
  const Box area = axes.area();
  const double key_w = kKeySamplePx + kKeyCharPx * static_cast<double>(roofs.size());
  const Box key{area.right - key_w, area.bottom - kKeyEntryPx * static_cast<double>(key_entries),
                area.right, area.bottom};
  // The ridge's own label: at (ridge, peak), offset by half a character right and a line down.
  const std::string ridge_text = fmt::format("ridge {:.3g} FLOP/B", ridge);
  const double ridge_x = axes.x_px(ridge) + kKeyCharPx / 2, ridge_y = axes.y_px(peak_gflops);
  const Box ridge_box{ridge_x, ridge_y + kKeyEntryPx / 2,
                      ridge_x + kKeyCharPx * static_cast<double>(ridge_text.size()),
                      ridge_y + 1.5 * kKeyEntryPx};
  body += label_lines(markers, at, axes, {key, ridge_box});
  body += plot + "\n";
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
