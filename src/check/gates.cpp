// Gates: parsing "name=amount", judging two directories, and judging paired repetitions.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "judge.h"
#include "llmprof/base/bytes.h"
#include "llmprof/check/check.h"
#include "llmprof/error.h"
#include "llmprof/rundir/read.h"

namespace llmprof::check {

namespace {

std::string_view flag_of(Bound b) {
  return b == Bound::kMax ? "--max" : b == Bound::kMin ? "--min" : "--within";
}

// "+5%", "5%", "-0.02", "1e-4": the signed amount, whether relative, and whether a sign was given.
struct Amount {
  double value = 0;
  bool relative = false;
  bool signed_ = false;
};

std::optional<Amount> parse_amount(std::string_view text) {
  Amount a;
  std::string s(text);
  if (!s.empty() && s.back() == '%') {
    a.relative = true;
    s.pop_back();
  }
  if (s.empty()) return std::nullopt;
  a.signed_ = s[0] == '+' || s[0] == '-';
  char* end = nullptr;
  a.value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(a.value) || std::isspace(s[0])) {
    return std::nullopt;
  }
  if (a.relative) a.value /= 100;
  return a;
}

// The candidate's bound in the figure's unit, from the baseline's value.
double limit_of(const Gate& g, double baseline) {
  const double delta = g.relative ? std::fabs(baseline) * g.amount : g.amount;
  return baseline + delta;
}

bool within_gate(const Gate& g, double baseline, double candidate) {
  const double limit = limit_of(g, baseline);
  switch (g.bound) {
    case Bound::kMax:
      return candidate <= limit;
    case Bound::kMin:
      return candidate >= limit;
    case Bound::kWithin:
      break;
  }
  return std::fabs(candidate - baseline) <= limit - baseline;
}

}  // namespace

std::string value_text(double v, const std::string& unit) {
  if (unit == "bytes") return bytes_text_exact(v);
  // Whole numbers up to 2^53 are exact in a double: an exact gate's figures print in full.
  const bool whole = std::fabs(v) < 9007199254740992.0 && v == std::trunc(v);
  const std::string number = whole ? fmt::format("{:.0f}", v) : fmt::format("{:.6g}", v);
  return unit.empty() ? number : number + " " + unit;
}

Gate parse_gate(Bound bound, std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw UsageError(fmt::format("{} {}: expected NAME=AMOUNT, e.g. step_ms=+5% or val_loss=+0.02",
                                 flag_of(bound), text));
  }
  Gate g;
  g.text = std::string(text);
  g.bound = bound;
  g.figure = find_figure(text.substr(0, eq));
  const std::optional<Amount> a = parse_amount(text.substr(eq + 1));
  if (!a) {
    throw UsageError(fmt::format("{} {}: '{}' is not an amount: expected a number, optionally "
                                 "signed and followed by % (+5%, -5%, 0.02, 1e-4)",
                                 flag_of(bound), text, text.substr(eq + 1)));
  }
  const FigureSpec& f = g.figure;
  const bool lower = f.direction == Direction::kLowerIsBetter;
  if ((bound == Bound::kMax && !lower) || (bound == Bound::kMin && lower)) {
    throw UsageError(fmt::format(
        "{} {}: {} is better when {}: bound it with {} {}=...", flag_of(bound), text, f.name,
        lower ? "lower" : "higher", lower ? "--max" : "--min", f.name));
  }
  if (bound == Bound::kWithin && a->value < 0) {
    throw UsageError(fmt::format("--within {}: a tolerance cannot be negative", text));
  }
  g.relative = a->relative;
  g.amount = a->value;
  // Without a sign, the amount is the move allowed in the bad direction.
  if (bound == Bound::kMin && !a->signed_) g.amount = -a->value;
  return g;
}

std::vector<Gate> default_gates(bool repetitions) {
  if (repetitions) return {parse_gate(Bound::kMax, "step_ms=+5%")};
  return {parse_gate(Bound::kWithin, "parameters=0"),
          parse_gate(Bound::kWithin, "flops_per_step=0"),
          parse_gate(Bound::kMax, "peak_rss_bytes=+10%"),
          parse_gate(Bound::kMax, "val_loss=+0.02"),
          parse_gate(Bound::kMax, "step_ms=+5%")};
}

// One gate between two readings (two directories, or the first pair of repetitions).
GateResult judge_pair(const Gate& g, const Reading& b, const Reading& c) {
  GateResult r;
  r.gate = g;
  r.baseline = b.value;
  r.candidate = c.value;
  if (!b.value || !c.value) {
    r.outcome = Outcome::kInconclusive;
    r.reason = !b.value ? "baseline: " + b.why_missing : "candidate: " + c.why_missing;
    return r;
  }
  if (*b.value != 0) r.ratio = *c.value / *b.value;
  const std::string& unit = g.figure.unit;
  if (g.figure.kind == Kind::kTiming) {
    r.outcome = Outcome::kReported;
    r.reason = fmt::format("{} -> {}: timing between two directories is reported, never gated "
                           "(gate it from repetitions: llmprof check --ab)",
                           value_text(*b.value, unit), value_text(*c.value, unit));
    return r;
  }
  r.limit = limit_of(g, *b.value);
  const bool ok = within_gate(g, *b.value, *c.value);
  r.outcome = ok ? Outcome::kPass : Outcome::kFail;
  const std::string bound =
      g.bound == Bound::kMax   ? fmt::format("<= {}", value_text(*r.limit, unit))
      : g.bound == Bound::kMin ? fmt::format(">= {}", value_text(*r.limit, unit))
                               : fmt::format("|candidate - baseline| <= {}",
                                             value_text(*r.limit - *b.value, unit));
  r.reason = fmt::format("baseline {}, candidate {}: {} {}", value_text(*b.value, unit),
                         value_text(*c.value, unit), ok ? "within" : "beyond", bound);
  return r;
}

int exit_code_of(const CheckResult& r) {
  bool inconclusive = false;
  for (const auto& g : r.results) {
    if (g.outcome == Outcome::kFail) return kExitRegression;
    inconclusive = inconclusive || g.outcome == Outcome::kInconclusive;
  }
  return inconclusive ? kExitInconclusive : kExitPass;
}

std::vector<bool> holm_reject(const std::vector<double>& p_values, double alpha) {
  std::vector<size_t> order(p_values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p_values[a] < p_values[b]; });
  std::vector<bool> rejected(p_values.size(), false);
  const size_t m = p_values.size();
  for (size_t k = 0; k < m; ++k) {
    if (p_values[order[k]] > alpha / static_cast<double>(m - k)) break;  // step-down stops
    rejected[order[k]] = true;
  }
  return rejected;
}

}  // namespace llmprof::check
