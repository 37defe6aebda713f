// 9: a radar (spider) chart of the best configurations on loss, throughput, MFU and energy
// efficiency, drawn with lines in Cartesian coordinates. Each axis is scaled over the configs
// shown: worst -> 0.2 (inner ring), best -> 1 (outer ring), so shape compares configs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chart.h"

namespace llmprof::plot::detail {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr size_t kMaxConfigs = 5;
constexpr double kInner = 0.2;  // radius of the worst value on an axis

struct Axis {
  std::string title;
  std::optional<double> Variant::*metric;
  bool lower_is_better;
  std::string format;  // printf format of the best/worst values in the axis label
  double scale;        // value x scale is printed (100 for a fraction shown in %)
};

// Configs not beaten on both lower val loss and higher tokens/s, then the rest by val loss.
std::vector<const Variant*> pick(const std::vector<Variant>& vs) {
  std::vector<const Variant*> cands, front, rest;
  for (const auto& v : vs) {
    if (v.val_loss && v.tokens_per_s) cands.push_back(&v);
  }
  for (const Variant* p : cands) {
    bool dominated = std::any_of(cands.begin(), cands.end(), [&](const Variant* q) {
      return *q->val_loss <= *p->val_loss && *q->tokens_per_s >= *p->tokens_per_s &&
             (*q->val_loss < *p->val_loss || *q->tokens_per_s > *p->tokens_per_s);
    });
    (dominated ? rest : front).push_back(p);
  }
  std::sort(rest.begin(), rest.end(),
            [](const Variant* a, const Variant* b) { return *a->val_loss < *b->val_loss; });
  front.insert(front.end(), rest.begin(), rest.end());
  if (front.size() > kMaxConfigs) front.resize(kMaxConfigs);
  return front;
}

bool all_have(const std::vector<const Variant*>& vs, std::optional<double> Variant::*m) {
  return std::all_of(vs.begin(), vs.end(), [&](const Variant* v) { return (v->*m).has_value(); });
}

}  // namespace

ChartResult radar_chart(const PlotInputs& in, const ChartWriter& w) {
  const char* name = "09_radar_best_configs";
  std::vector<const Variant*> configs = pick(in.variants);
  if (configs.size() < 2) {
    return skipped(name, "needs 2 or more runs or sweep points with val loss and tokens/s");
  }
  std::vector<Axis> axes = {{"val loss", &Variant::val_loss, true, "%.3f", 1},
                            {"throughput (tokens/s)", &Variant::tokens_per_s, false, "%.0f", 1}};
  if (all_have(configs, &Variant::mfu))
    axes.push_back({"MFU", &Variant::mfu, false, "%.1f%%", 100});
  bool energy = all_have(configs, &Variant::tokens_per_j);
  if (energy) {
    axes.push_back(
        {"energy efficiency (tokens per joule)", &Variant::tokens_per_j, false, "%.3g", 1});
  }
  if (axes.size() < 3) return skipped(name, "needs MFU or energy for a third axis");

  size_t k_axes = axes.size();
  auto angle = [&](size_t k) { return kPi / 2 - 2 * kPi * static_cast<double>(k) / k_axes; };
  std::string web = "# rings and spokes\n";
  for (double r : {kInner, 0.4, 0.6, 0.8, 1.0}) {
    for (size_t k = 0; k <= k_axes; ++k) {
      web += fmt::format("{:.5f} {:.5f}\n", r * std::cos(angle(k % k_axes)),
                         r * std::sin(angle(k % k_axes)));
    }
    web += "\n";
  }
  for (size_t k = 0; k < k_axes; ++k) {
    web += fmt::format("0 0\n{:.5f} {:.5f}\n\n", std::cos(angle(k)), std::sin(angle(k)));
  }
  std::string web_file = w.data(std::string(name) + "_web.dat", web);

  std::string body = fmt::format(
      "set title {}\n",
      gp_quote("Best configurations: each axis from worst (inner ring) to best (outer ring)" +
               std::string(energy ? "" : "; energy not measured")));
  body += "set size ratio -1\nunset border\nunset xtics\nunset ytics\nunset grid\n";
  body += "set xrange [-2.3:2.3]\nset yrange [-1.3:1.3]\n";
  body += "set key below center horizontal reverse Left samplen 2 height 1\n";
  for (size_t k = 0; k < k_axes; ++k) {
    double lo = 1e300, hi = -1e300;
    for (const Variant* v : configs) {
      lo = std::min(lo, *(v->*axes[k].metric));
      hi = std::max(hi, *(v->*axes[k].metric));
    }
    double best = axes[k].lower_is_better ? lo : hi, worst = axes[k].lower_is_better ? hi : lo;
    char b1[64], b2[64];
    std::snprintf(b1, sizeof b1, axes[k].format.c_str(), best * axes[k].scale);
    std::snprintf(b2, sizeof b2, axes[k].format.c_str(), worst * axes[k].scale);
    double x = 1.12 * std::cos(angle(k)), y = 1.12 * std::sin(angle(k));
    const char* align = x > 0.15 ? "left" : (x < -0.15 ? "right" : "center");
    body += fmt::format("set label {} {} at {:.4f},{:.4f} {}\n", k + 1,
                        gp_quote(fmt::format("{}\nbest {}, worst {}", axes[k].title, b1, b2)), x,
                        y + (y > 0.5 ? 0.08 : (y < -0.5 ? -0.08 : 0)), align);
  }
  std::string plots =
      fmt::format("{} with lines lc rgb '#bbbbbb' lw 1 notitle", gp_quote(web_file));
  for (size_t i = 0; i < configs.size(); ++i) {
    std::string data = "# x y (axis order: " + std::to_string(k_axes) + " axes)\n";
    for (size_t k = 0; k <= k_axes; ++k) {
      const Axis& a = axes[k % k_axes];
      double lo = 1e300, hi = -1e300;
      for (const Variant* v : configs) {
        lo = std::min(lo, *(v->*a.metric));
        hi = std::max(hi, *(v->*a.metric));
      }
      double value = *(configs[i]->*a.metric);
      double t = hi > lo ? (value - lo) / (hi - lo) : 1.0;
      if (a.lower_is_better) t = hi > lo ? 1.0 - t : 1.0;
      double r = kInner + (1 - kInner) * t;
      data += fmt::format("{:.5f} {:.5f}\n", r * std::cos(angle(k % k_axes)),
                          r * std::sin(angle(k % k_axes)));
    }
    std::string file = w.data(fmt::format("{}_config{}.dat", name, i), data);
    plots += fmt::format(", \\\n     {} with linespoints lt {} lw 2.5 title {}", gp_quote(file),
                         i + 1, gp_quote(configs[i]->label));
  }
  body += "plot " + plots + "\n";
  return w.render(name, body, 1100, 700);
}

}  // namespace llmprof::plot::detail
