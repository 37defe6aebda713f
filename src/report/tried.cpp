#include "llmprof/report/tried.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/report/document.h"
#include "llmprof/rundir/files.h"

namespace llmprof::report {

namespace {

using nlohmann::json;

json to_json(const TriedSet& t) {
  json j = {{"set", t.set},     {"rules", t.rules},       {"figure", ab::figure_name(t.figure)},
            {"steps", t.steps}, {"baseline", t.baseline}, {"candidate", t.candidate},
            {"error", t.error}, {"time", t.time},         {"command", t.command}};
  if (!t.comparison) {
    j["verdict"] = nullptr;
    return j;
  }
  const ab::Comparison& c = *t.comparison;
  j["verdict"] = ab::verdict_name(c.verdict);
  j["pairs"] = c.pairs;
  j["baseline_median"] = c.baseline_median;
  j["candidate_median"] = c.candidate_median;
  j["ratio_of_medians"] = c.ratio_of_medians;
  j["median_paired_ratio"] = c.median_paired_ratio;
  j["confidence"] = c.confidence;
  j["ci_low"] = c.interval ? json(c.interval->low) : json();
  j["ci_high"] = c.interval ? json(c.interval->high) : json();
  return j;
}

// One entry; throws std::runtime_error (what) for a missing or mistyped field.
TriedSet from_json(const json& j) {
  TriedSet t;
  t.set = j.at("set").get<std::string>();
  t.rules = j.at("rules").get<std::vector<std::string>>();
  const std::string figure = j.at("figure").get<std::string>();
  const auto f = ab::parse_figure(figure);
  if (!f) throw std::runtime_error("figure '" + figure + "' is not one this version knows");
  t.figure = *f;
  t.steps = j.at("steps").get<int64_t>();
  t.baseline = j.at("baseline").get<std::vector<double>>();
  t.candidate = j.at("candidate").get<std::vector<double>>();
  t.error = j.value("error", "");
  t.time = j.value("time", "");
  t.command = j.value("command", "");
  if (j.at("verdict").is_null()) return t;
  const std::string name = j.at("verdict").get<std::string>();
  const auto verdict = ab::parse_verdict(name);
  if (!verdict) throw std::runtime_error("verdict '" + name + "' is not one this version knows");
  ab::Comparison c;
  c.verdict = *verdict;
  c.pairs = j.at("pairs").get<int64_t>();
  c.baseline_median = j.at("baseline_median").get<double>();
  c.candidate_median = j.at("candidate_median").get<double>();
  c.ratio_of_medians = j.at("ratio_of_medians").get<double>();
  c.median_paired_ratio = j.at("median_paired_ratio").get<double>();
  c.confidence = j.at("confidence").get<double>();
  if (!j.at("ci_low").is_null() && !j.at("ci_high").is_null()) {
    c.interval = ab::Interval{j.at("ci_low").get<double>(), j.at("ci_high").get<double>()};
  }
  t.comparison = c;
  return t;
}

// "time per token" and the like: what the figure measures, in words.
std::string figure_words(ab::Figure f) {
  switch (f) {
    case ab::Figure::kMedianStepMs:
      return "median step time";
    case ab::Figure::kStepUsPerToken:
      return "step time per token";
    case ab::Figure::kWallUsPerToken:
      break;
  }
  return "wall time (steps + evals) per token";
}

std::string x(double v) { return format_number(v, 3) + "x"; }

}  // namespace

std::vector<TriedSet> read_tried(const std::string& run_dir) {
  const std::string path = rundir::path(run_dir, kTriedFile);
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  std::vector<TriedSet> out;
  try {
    const json j = json::parse(text.str());
    for (const auto& e : j.at("tried")) out.push_back(from_json(e));
  } catch (const std::exception& e) {  // json::exception and the field checks above
    throw DataError(fmt::format("{}: {}", path, e.what()));
  }
  return out;
}

void write_tried(const std::string& run_dir,
                 const std::vector<TriedSet>& earlier,
                 const std::vector<TriedSet>& fresh) {
  json list = json::array();
  for (const auto& t : earlier) {
    bool replaced = false;
    for (const auto& f : fresh) replaced = replaced || (f.set == t.set && f.figure == t.figure);
    if (!replaced) list.push_back(to_json(t));
  }
  for (const auto& t : fresh) list.push_back(to_json(t));
  const json doc = {{"schema_version", kTriedSchemaVersion},
                    {"what",
                     "llmprof report --try: each suggested --set as an A/B of short "
                     "trainings against the run's own config"},
                    {"tried", list}};
  output::write_file_atomic(rundir::path(run_dir, kTriedFile), doc.dump(2) + "\n");
}

std::string tried_text(const TriedSet& t) {
  if (!t.comparison) return "tried: not measured: " + t.error;
  const ab::Comparison& c = *t.comparison;
  const double r = c.ratio_of_medians;  // candidate / baseline time
  const std::string how =
      fmt::format("{} repetitions of {} steps each, {}", c.pairs, t.steps, figure_words(t.figure));
  if (!c.interval) {
    return fmt::format("tried: inconclusive ({} the time; too few repetitions for an interval; {})",
                       x(r), how);
  }
  const int pct = static_cast<int>(c.confidence * 100 + 0.5);
  const ab::Interval& ci = *c.interval;
  switch (c.verdict) {
    case ab::Verdict::kFaster:
      return fmt::format("tried: {} faster ({}% CI {} to {}; {})", x(1 / r), pct, x(1 / ci.high),
                         x(1 / ci.low), how);
    case ab::Verdict::kSlower:
      return fmt::format("tried: slower, not advised ({} slower, {}% CI {} to {}; {})", x(r), pct,
                         x(ci.low), x(ci.high), how);
    case ab::Verdict::kInconclusive:
      break;
  }
  return fmt::format("tried: inconclusive ({} the time; the {}% CI {} to {} spans no change; {})",
                     x(r), pct, x(ci.low), x(ci.high), how);
}

}  // namespace llmprof::report
