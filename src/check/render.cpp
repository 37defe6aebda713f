// The renderings of a check: text for a terminal, Markdown for a step summary, JSON, JUnit XML.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "llmprof/check/check.h"
#include "llmprof/rundir/files.h"

namespace llmprof::check {

namespace {

std::string bound_text(const Gate& g) {
  return fmt::format("--{} {}", config::name(g.bound), g.text);
}

std::string number(const std::optional<double>& v) {
  return v ? fmt::format("{:.6g}", *v) : "null";
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
  out += "| gate | point | outcome | baseline | candidate | ratio | interval (confidence) | why |\n";
  out += "|---|---|---|---:|---:|---:|---|---|\n";
  for (const auto& g : r.results) {
    out += fmt::format("| `{}` | {} | **{}** | {} | {} | {} | {} | {} |\n", bound_text(g.gate),
                       g.point, config::name(g.outcome), number(g.baseline),
                       number(g.candidate), g.ratio ? fmt::format("{:.3f}", *g.ratio) : "",
                       interval_text(g), g.reason);
  }
  out += fmt::format("\n{}\n", verdict_line(r));
  if (!r.command.empty()) out += fmt::format("\n`{}`\n", r.command);
  return out;
}

std::string render_json(const CheckResult& r) {
  nlohmann::json gates = nlohmann::json::array();
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  for (const auto& g : r.results) {
    nlohmann::json j{{"figure", g.gate.figure.name},
                     {"bound", config::name(g.gate.bound)},
                     {"gate", g.gate.text},
                     {"kind", config::name(g.gate.figure.kind)},
                     {"direction", config::name(g.gate.figure.direction)},
                     {"point", g.point.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.point)},
                     {"baseline", opt(g.baseline)},
                     {"candidate", opt(g.candidate)},
                     {"limit", opt(g.limit)},
                     {"ratio", opt(g.ratio)},
                     {"outcome", config::name(g.outcome)},
                     {"reason", g.reason}};
    j["interval"] = g.interval ? nlohmann::json{{"low", g.interval->low},
                                                {"high", g.interval->high},
                                                {"confidence", g.interval->confidence}}
                               : nlohmann::json(nullptr);
    gates.push_back(std::move(j));
  }
  const int code = exit_code_of(r);
  nlohmann::json doc{{"schema_version", rundir::kCheckSchemaVersion},
                     {"mode", r.repetitions ? "repetitions" : "directories"},
                     {"baseline", r.baseline},
                     {"candidate", r.candidate},
                     {"rounds", r.repetitions ? nlohmann::json(r.rounds) : nlohmann::json(nullptr)},
                     {"verdict", code == kExitPass         ? "pass"
                                 : code == kExitRegression ? "regression"
                                                           : "inconclusive"},
                     {"exit_code", code},
                     {"command", r.command},
                     {"gates", std::move(gates)}};
  return doc.dump(2) + "\n";
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
        g.reason, r.baseline, r.candidate, number(g.baseline), number(g.candidate),
        number(g.ratio), interval_text(g), r.command);
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
