// 12: the roofline of a run (ops.csv against env.json's two roofs): log-log, arithmetic intensity
// against achieved GFLOP/s, the memory and compute roofs meeting at the ridge point, one point per
// op sized by its time per step and coloured by its bound, the biggest labelled.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "chart.h"

namespace llmprof::plot::detail {

namespace {

constexpr size_t kLabelled = 12;  // ops with the most time get a label

int bound_index(const std::string& bound) {
  return bound == "compute" ? 1 : bound == "memory" ? 2 : bound == "overhead" ? 3 : 4;
}

std::string short_op(const std::string& op) {
  return op.rfind("aten::", 0) == 0 ? op.substr(6) : op;
}

ChartResult roofline_chart(const rundir::Run& run, const std::string& name, const ChartWriter& w) {
  if (run.ops.empty()) return skipped(name, run.label + ": no ops.csv (profile.level=ops)");
  if (!run.peak_flops_per_s || !run.peak_bytes_per_s || *run.peak_bytes_per_s <= 0) {
    return skipped(name, run.label + ": env.json has no peak_flops and peak_bandwidth");
  }
  std::vector<const rundir::OpRow*> ops;
  for (const auto& o : run.ops) {
    const auto& r = o.roofline;
    if (r.arithmetic_intensity && *r.arithmetic_intensity > 0 && r.achieved_gflops_per_s &&
        *r.achieved_gflops_per_s > 0 && o.total_ms) {
      ops.push_back(&o);
    }
  }
  if (ops.empty()) return skipped(name, run.label + ": no op with counted FLOPs and bytes");
  std::sort(ops.begin(), ops.end(), [](const rundir::OpRow* a, const rundir::OpRow* b) {
    return *a->total_ms > *b->total_ms;
  });
  const double peak_gflops = *run.peak_flops_per_s * 1e-9;
  const double peak_gbps = *run.peak_bytes_per_s * 1e-9;
  const double ridge = peak_gflops / peak_gbps;
  const double max_ms = *ops.front()->total_ms;
  double x_lo = ridge, x_hi = ridge, y_lo = peak_gflops;
  std::string rows = "# intensity_flop_per_byte achieved_gflops_per_s point_size bound label\n";
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& r = ops[i]->roofline;
    x_lo = std::min(x_lo, *r.arithmetic_intensity);
    x_hi = std::max(x_hi, *r.arithmetic_intensity);
    y_lo = std::min(y_lo, *r.achieved_gflops_per_s);
    const double size = 0.6 + 3.0 * std::sqrt(*ops[i]->total_ms / max_ms);
    rows += fmt::format("{} {} {} {} {}\n", dat(r.arithmetic_intensity),
                        dat(r.achieved_gflops_per_s), dat(size), bound_index(r.bound),
                        gp_quote(i < kLabelled ? short_op(ops[i]->op) : ""));
  }
  const std::string file = w.data(name + ".dat", rows);
  const size_t left_out = run.ops.size() - ops.size();
  std::string body = fmt::format(
      "set logscale xy\n"
      "set xrange [{}:{}]\nset yrange [{}:{}]\n"
      "set xlabel \"arithmetic intensity (FLOP/byte; bytes counted as a lower bound)\"\n"
      "set ylabel \"achieved GFLOP/s (counted FLOPs / total time)\"\n"
      "set key bottom right\n"
      "roof(x) = x * {} < {} ? x * {} : {}\n"
      "set arrow from {}, graph 0 to {}, graph 1 nohead dt 2 lc rgb \"gray50\"\n"
      "set label {} at {}, {} left offset 0.5,-1 textcolor rgb \"gray30\"\n"
      "set samples 400\n",
      x_lo / 4, x_hi * 4, y_lo / 4, peak_gflops * 3, peak_gbps, peak_gflops, peak_gbps,
      peak_gflops, ridge, ridge, gp_quote(fmt::format("ridge {:.3g} FLOP/B", ridge)), ridge,
      peak_gflops);
  body += fmt::format("set title {}\n",
                      gp_quote(fmt::format(
                          "Roofline: {} ({} ops with FLOPs and bytes; {} without are left out; "
                          "points sized by time per step)",
                          run.label, ops.size(), left_out)));
  const char* kColours[] = {"#1f77b4", "#d62728", "#7f7f7f", "#bcbd22"};
  const char* kBounds[] = {"compute-bound", "memory-bound", "overhead-bound", "bound unknown"};
  body += fmt::format(
      "plot roof(x) with lines lw 2 lc rgb \"black\" title {}",
      gp_quote(fmt::format("roofs: {:.4g} GB/s x intensity, {:.4g} GFLOP/s", peak_gbps,
                           peak_gflops)));
  for (int b = 1; b <= 4; ++b) {
    body += fmt::format(
        ", \\\n     {} using 1:($4=={}?$2:1/0):3 with points pt 7 ps variable lc rgb \"{}\" "
        "title \"{}\"",
        gp_quote(file), b, kColours[b - 1], kBounds[b - 1]);
  }
  body += fmt::format(", \\\n     {} using 1:2:5 with labels offset 0,1.2 font \",9\" notitle\n",
                      gp_quote(file));
  return w.render(name, body, 1000, 650);
}

}  // namespace

std::vector<ChartResult> roofline_charts(const PlotInputs& in, const ChartWriter& w) {
  std::vector<ChartResult> out;
  std::vector<const rundir::Run*> with;
  for (const auto& run : in.runs) {
    if (!run.ops.empty()) with.push_back(&run);
  }
  if (with.empty()) return {skipped("12_roofline", "no run has ops.csv (profile.level=ops)")};
  for (size_t i = 0; i < with.size(); ++i) {
    const std::string name = with.size() == 1 ? "12_roofline" : fmt::format("12_roofline_{}", i + 1);
    out.push_back(roofline_chart(*with[i], name, w));
  }
  return out;
}

}  // namespace llmprof::plot::detail
