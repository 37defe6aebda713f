// tune.svg and tune.html: the candidates' speed against their planned memory, the winner marked,
// beside the table (llmprof/tune/tune.h). Plain SVG: no plotting program needed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "llmprof/plan/plan.h"
#include "llmprof/tune/tune.h"

namespace llmprof::tune {

namespace {

constexpr double kW = 640, kH = 400, kLeft = 70, kRight = 20, kTop = 30, kBottom = 50;

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

// The speed the chart shows: tokens/s relative to the start (1/ratio), or step time (ratio).
double shown(const rundir::TuneDoc& d, double ratio) {
  return d.inputs.objective == "tokens_per_s" ? 1 / ratio : ratio;
}

std::string sets_label(const rundir::TuneCandidate& c) {
  std::string s;
  for (const std::string& x : c.sets) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::string tune_chart_svg(const rundir::TuneDoc& d) {
  double x_max = 1, y_max = 1.2;
  for (const rundir::TuneCandidate& c : d.candidates) {
    if (c.planned_peak_bytes) x_max = std::max(x_max, static_cast<double>(*c.planned_peak_bytes));
    if (c.ratio && *c.ratio > 0) y_max = std::max(y_max, 1.1 * shown(d, *c.ratio));
  }
  x_max *= 1.1;
  const auto px = [&](double bytes) { return kLeft + (kW - kLeft - kRight) * bytes / x_max; };
  const auto py = [&](double v) { return kH - kBottom - (kH - kTop - kBottom) * v / y_max; };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n",
      kW, kH, kLeft, kH - kBottom, kW - kRight, kH - kBottom, kLeft, kTop, kLeft, kH - kBottom);
  const bool tokens = d.inputs.objective == "tokens_per_s";
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">planned peak memory (max {})</text>\n"
      "<text x=\"15\" y=\"{}\" transform=\"rotate(-90 15 {})\" text-anchor=\"middle\">{} "
      "relative to the start</text>\n",
      (kLeft + kW - kRight) / 2, kH - 12, plan::bytes_text(static_cast<int64_t>(x_max / 1.1)),
      (kTop + kH - kBottom) / 2, (kTop + kH - kBottom) / 2,
      tokens                                     ? "tokens/s"
      : d.inputs.objective == "energy_per_token" ? "energy per token"
                                                 : "step time");
  s += fmt::format(
      "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#888\" "
      "stroke-dasharray=\"4 3\"/>\n<text x=\"{}\" y=\"{:.1f}\">start (1.0)</text>\n",
      kLeft, py(1), kW - kRight, py(1), kLeft + 4, py(1) - 4);
  for (const rundir::TuneCandidate& c : d.candidates) {
    if (!c.planned_peak_bytes) continue;
    const double x = px(static_cast<double>(*c.planned_peak_bytes));
    const std::string title = escaped(fmt::format("{}: {} {}", c.id, sets_label(c), c.outcome));
    if (!c.ratio) {  // not measured (does not fit, planned; unmeasured): on the axis
      s += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#b00\" text-anchor=\"middle\">x<title>{}"
          "</title></text>\n",
          x, py(0) - 3, title);
      continue;
    }
    const double y = py(shown(d, *c.ratio));
    const bool winner = d.winner && *d.winner == c.id;
    if (c.ci_low && c.ci_high) {
      s += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
          "stroke=\"#446\"/>\n",
          x, py(shown(d, *c.ci_low)), py(shown(d, *c.ci_high)));
    }
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}</title></circle>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}{}</text>\n",
        x, y, winner ? 7 : 4, winner ? "#d60" : "#336", title, x + 8, y + 4, c.id,
        winner ? " winner" : "");
  }
  return s + "</svg>\n";
}

std::string tune_html(const rundir::TuneDoc& d) {
  std::string s = fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>llmprof tune: {}</title>\n"
      "<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}"
      "td,th{{border:1px solid #ccc;padding:3px 6px;font-size:13px}}</style></head><body>\n"
      "<h1>llmprof tune: {}</h1>\n<p>{}</p>\n<p>Planner: {}.</p>\n",
      escaped(d.inputs.config_path), escaped(d.inputs.config_path), escaped(d.conclusion),
      escaped(d.planner_check));
  s += tune_chart_svg(d);
  s += "<table><tr><th>id</th><th>sets</th><th>numerics</th><th>planned peak</th>"
       "<th>outcome</th><th>rounds</th><th>speed</th><th>loss@" +
       std::to_string(d.inputs.steps) + "</th><th>time s</th><th>why</th></tr>\n";
  for (const rundir::TuneCandidate& c : d.candidates) {
    s += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{:.0f}</td><td>{}</td></tr>\n",
        c.id, escaped(sets_label(c)), c.numerics,
        c.planned_peak_bytes ? plan::bytes_text(*c.planned_peak_bytes) : "not planned", c.outcome,
        c.rounds, escaped(speed_text(d, c)),
        c.loss_difference ? fmt::format("{:+.2f}%", 100 * *c.loss_difference) : "", c.seconds,
        escaped(c.reason));
  }
  return s + "</table>\n</body></html>\n";
}

}  // namespace llmprof::tune
