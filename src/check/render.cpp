// The renderings of a check: text for a terminal, Markdown for a step summary, JSON, JUnit XML.
#include <fmt/format.h>

#include "llmprof/check/check.h"
#include "llmprof/rundir/check_doc.h"

namespace llmprof::check {

namespace {

std::string bound_text(const Gate& g) {
  return fmt::format("--{} {}", config::name(g.bound), g.text);
}

std::string number(const std::optional<double>& v, const std::string& unit) {
  return v ? value_text(*v, unit) : "null";
}

std::string interval_text(const GateResult& r) {
  return r.interval ? fmt::format("[{:.3f}, {:.3f}] ({:.1f}%)", r.interval->low, r.interval->high,
                                  100 * r.interval->confidence)
                    : "";
}

std::string case_name(const GateResult& r) {
  return r.point.empty() ? r.gate.text : fmt::format("{} @ {}", r.gate.text, r.point);
}

// XML character data and attribute values.
std::string xml(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n') {
          out += ' ';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

struct Counts {
  int64_t total = 0, failed = 0, inconclusive = 0, passed = 0, reported = 0;
};

Counts count(const CheckResult& r) {
  Counts c;
  for (const auto& g : r.results) {
    ++c.total;
    c.failed += g.outcome == Outcome::kFail;
    c.inconclusive += g.outcome == Outcome::kInconclusive;
    c.passed += g.outcome == Outcome::kPass;
    c.reported += g.outcome == Outcome::kReported;
  }
  return c;
}

std::string verdict_line(const CheckResult& r) {
  const Counts c = count(r);
  const int code = exit_code_of(r);
  return fmt::format("{}: {} passed, {} failed, {} inconclusive, {} reported ({})",
                     code == kExitPass ? "PASS" : code == kExitRegression ? "REGRESSION"
                                                                          : "INCONCLUSIVE",
                     c.passed, c.failed, c.inconclusive, c.reported,
                     r.repetitions ? fmt::format("{} interleaved rounds", r.rounds)
                                   : "two directories");
}

}  // namespace

std::string render_text(const CheckResult& r) {
  std::string out;
  for (const auto& g : r.results) {
    out += fmt::format("{:<12} {}: {}\n", config::name(g.outcome), case_name(g), g.reason);
  }
  return out + verdict_line(r) + "\n";
}

std::string render_markdown(const CheckResult& r) {
  std::string out = "### llmprof check\n\n";
  out += fmt::format("Baseline `{}`, candidate `{}`.\n\n", r.baseline, r.candidate);
  out +=
      "| gate | point | outcome | baseline | candidate | ratio | interval (confidence) | why |\n";
  out += "|---|---|---|---:|---:|---:|---|---|\n";
  for (const auto& g : r.results) {
    out += fmt::format("| `{}` | {} | **{}** | {} | {} | {} | {} | {} |\n", bound_text(g.gate),
                       g.point, config::name(g.outcome), number(g.baseline, g.gate.figure.unit),
                       number(g.candidate, g.gate.figure.unit),
                       g.ratio ? fmt::format("{:.3f}", *g.ratio) : "", interval_text(g), g.reason);
  }
  out += fmt::format("\n{}\n", verdict_line(r));
  if (!r.command.empty()) out += fmt::format("\n`{}`\n", r.command);
  return out;
}

// The JSON rendering through rundir's typed document (rundir::CheckDoc), its one writer.
std::string render_json(const CheckResult& r) {
  rundir::CheckDoc d;
  d.mode = r.repetitions ? "repetitions" : "directories";
  d.baseline = r.baseline;
  d.candidate = r.candidate;
  if (r.repetitions) d.rounds = r.rounds;
  d.exit_code = exit_code_of(r);
  d.verdict = d.exit_code == kExitPass         ? "pass"
              : d.exit_code == kExitRegression ? "regression"
                                               : "inconclusive";
  d.command = r.command;
  for (const auto& g : r.results) {
    rundir::CheckGate out;
    out.figure = g.gate.figure.name;
    out.bound = config::name(g.gate.bound);
    out.gate = g.gate.text;
    out.kind = config::name(g.gate.figure.kind);
    out.direction = config::name(g.gate.figure.direction);
    out.point = g.point;
    out.baseline = g.baseline;
    out.candidate = g.candidate;
    out.limit = g.limit;
    out.ratio = g.ratio;
    if (g.interval) {
      out.interval =
          rundir::CheckInterval{g.interval->low, g.interval->high, g.interval->confidence};
    }
    out.outcome = config::name(g.outcome);
    out.reason = g.reason;
    d.gates.push_back(std::move(out));
  }
  return rundir::check_doc_text(d);
}

std::string render_junit(const CheckResult& r) {
  const Counts c = count(r);
  std::string cases;
  for (const auto& g : r.results) {
    cases += fmt::format("    <testcase name=\"{}\" classname=\"llmprof.check.{}\" time=\"0\">\n",
                         xml(case_name(g)), config::name(g.gate.figure.kind));
    const std::string detail = fmt::format(
        "{}\nbaseline: {}\ncandidate: {}\nbaseline value: {}\ncandidate value: {}\nratio: {}\n"
        "interval: {}\ncommand: {}",
        g.reason, r.baseline, r.candidate, number(g.baseline, g.gate.figure.unit),
        number(g.candidate, g.gate.figure.unit), number(g.ratio, ""), interval_text(g), r.command);
    if (g.outcome == Outcome::kFail) {
      cases += fmt::format("      <failure message=\"{}\" type=\"regression\">{}</failure>\n",
                           xml(g.reason), xml(detail));
    } else if (g.outcome == Outcome::kInconclusive) {
      cases += fmt::format("      <skipped message=\"inconclusive: {}\"/>\n", xml(g.reason));
      cases += fmt::format("      <system-out>{}</system-out>\n", xml(detail));
    } else {
      cases += fmt::format("      <system-out>{}</system-out>\n", xml(detail));
    }
    cases += "    </testcase>\n";
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"llmprof check\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\">\n"
      "  <testsuite name=\"llmprof check\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\" time=\"0\">\n{3}  </testsuite>\n</testsuites>\n",
      c.total, c.failed, c.inconclusive, cases);
}

}  // namespace llmprof::check
