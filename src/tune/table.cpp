// tune.md: the answer of a search as a Markdown table (llmprof/tune/tune.h).
#include <fmt/format.h>

#include <cmath>

#include "llmprof/plan/plan.h"
#include "llmprof/tune/tune.h"

namespace llmprof::tune {

std::string speed_text(const rundir::TuneDoc& doc, const rundir::TuneCandidate& c) {
  if (!c.ratio || *c.ratio <= 0) return "";
  const bool tokens = doc.inputs.objective == "tokens_per_s";
  // tokens/s: the start's time per token over the candidate's (higher is better).
  const auto v = [&](double ratio) { return tokens ? 1 / ratio : ratio; };
  const char* unit = tokens                                       ? "tokens/s"
                     : doc.inputs.objective == "energy_per_token" ? "J/token"
                                                                  : "step_ms";
  std::string s = fmt::format("{:.2f}x {}", v(*c.ratio), unit);
  if (c.ci_low && c.ci_high) {
    const double a = v(*c.ci_low), b = v(*c.ci_high);
    s += fmt::format(" [{:.2f}, {:.2f}]", std::min(a, b), std::max(a, b));
  }
  return s;
}

std::string tune_table_markdown(const rundir::TuneDoc& d) {
  std::string s = fmt::format("# llmprof tune: {}\n\n", d.inputs.config_path);
  s += fmt::format("{}\n\n", d.conclusion);
  s += fmt::format(
      "Objective {} ({}), {} steps a repetition, device {}, budget {:.0f} s, spent {:.0f} s, "
      "status {}.\n\nPlanner: {}.\n\n",
      d.inputs.objective, d.inputs.figure, d.inputs.steps, d.inputs.device, d.budget_s,
      d.seconds_spent, d.status, d.planner_check);
  s += "| id | sets | numerics | predicted | planned peak | outcome | rounds | speed | loss@" +
       std::to_string(d.inputs.steps) + " | time s | why |\n";
  s += "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const rundir::TuneCandidate& c : d.candidates) {
    std::string sets;
    for (const std::string& x : c.sets) sets += (sets.empty() ? "" : ", ") + x;
    const std::string loss =
        c.loss_difference ? fmt::format("{:+.2f}%", 100 * *c.loss_difference) : "";
    const std::string peak = c.planned_peak_bytes
                                 ? plan::bytes_text(*c.planned_peak_bytes) +
                                       (c.planned_fits.value_or(true) ? "" : " (does not fit)")
                                 : "not planned";
    // As the speed column reads: tokens/s relative to the start (the inverse of the time ratio).
    const bool tokens = d.inputs.objective == "tokens_per_s";
    const std::string predicted =
        c.predicted_ratio && *c.predicted_ratio > 0
            ? fmt::format("{:.2f}x", tokens ? 1 / *c.predicted_ratio : *c.predicted_ratio)
            : "";
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0f} | {} |\n", c.id, sets,
                     c.numerics, predicted, peak, c.outcome, c.rounds, speed_text(d, c), loss,
                     c.seconds, c.reason);
  }
  for (const std::string& n : d.notes) s += "\n- " + n;
  if (!d.notes.empty()) s += "\n";
  return s;
}

}  // namespace llmprof::tune
