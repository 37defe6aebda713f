// llmprof check: a candidate against a baseline, as a pass/fail (exit 0/3/4) a CI system reads.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/ab/train_trial.h"
#include "llmprof/check/check.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"

namespace llmprof::cli {

namespace {

struct CheckArgs {
  std::vector<std::string> dirs;
  std::vector<std::string> ab;  // two commands
  std::vector<std::string> max, min, within;
  int64_t repetitions = 10;
  std::string format = "text";
  std::string out_path;
  bool figures = false;
};

std::vector<check::Gate> gates_of(const CheckArgs& a) {
  std::vector<check::Gate> gates;
  for (const auto& t : a.max) gates.push_back(check::parse_gate(check::Bound::kMax, t));
  for (const auto& t : a.min) gates.push_back(check::parse_gate(check::Bound::kMin, t));
  for (const auto& t : a.within) gates.push_back(check::parse_gate(check::Bound::kWithin, t));
  if (gates.empty()) gates = check::default_gates(!a.ab.empty());
  return gates;
}

std::string render(const check::CheckResult& r, const std::string& format) {
  if (format == "text") return check::render_text(r);
  if (format == "md" || format == "markdown") return check::render_markdown(r);
  if (format == "json") return check::render_json(r);
  if (format == "junit") return check::render_junit(r);
  throw UsageError(fmt::format("--format {}: expected text, md, json or junit", format));
}

std::string figure_list() {
  std::string out;
  for (const auto& f : check::known_figures()) {
    out += fmt::format("{:<24} {:<6} better {:<6} {}  ({})\n", f.name, config::name(f.kind),
                       config::name(f.direction), f.unit, f.source);
  }
  return out;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string command_line(const CheckArgs& a) {
  std::string cmd = "llmprof check";
  if (a.ab.empty()) {
    for (const auto& d : a.dirs) cmd += " " + d;
  } else {
    cmd += fmt::format(" --ab {} {} --repetitions {}", quoted(a.ab[0]), quoted(a.ab[1]),
                       a.repetitions);
  }
  for (const auto& t : a.max) cmd += " --max " + t;
  for (const auto& t : a.min) cmd += " --min " + t;
  for (const auto& t : a.within) cmd += " --within " + t;
  return cmd;
}

check::CheckResult run_ab(const CheckArgs& a, const std::vector<check::Gate>& gates) {
  check::AbCheckOptions opts;
  opts.baseline_command = a.ab[0];
  opts.candidate_command = a.ab[1];
  opts.rounds = a.repetitions;
  opts.gates = gates;
  check::check_ab_rounds(opts);  // before the scratch directory: nothing is left behind
  opts.scratch_dir = ab::make_scratch_dir();
  fmt::print(stderr, "check: {} rounds of baseline and candidate into {}\n", a.repetitions,
             opts.scratch_dir);
  auto progress = [](const ab::Repetition& r, int64_t done, int64_t total) {
    fmt::print(stderr, "  [{}/{}] {} {}\n", done, total, ab::arm_name(r.arm), r.round + 1);
  };
  check::CheckResult r = check::check_ab(opts, progress);
  std::error_code ec;
  std::filesystem::remove_all(opts.scratch_dir, ec);  // a failure throws before: its logs stay
  return r;
}

// $GITHUB_STEP_SUMMARY, when set: the Markdown table appended, as GitHub Actions renders it.
void append_step_summary(const check::CheckResult& r) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (path == nullptr || *path == '\0') return;
  std::ofstream out(path, std::ios::app);
  out << check::render_markdown(r);
  if (!out.flush()) {
    throw IoError(fmt::format("GITHUB_STEP_SUMMARY {}: cannot append the summary", path));
  }
}

int run_check(const CheckArgs& a) {
  if (a.figures) {
    fmt::print("{}", figure_list());
    return 0;
  }
  if (a.ab.empty() && a.dirs.size() != 2) {
    throw UsageError("check: give BASELINE and CANDIDATE directories, or --ab \"<baseline "
                     "command>\" \"<candidate command>\"");
  }
  if (!a.ab.empty() && !a.dirs.empty()) {
    throw UsageError("check: --ab takes two commands; directories are not given with it");
  }
  render(check::CheckResult{}, a.format);  // a bad --format fails before any work
  const std::vector<check::Gate> gates = gates_of(a);
  check::CheckResult r =
      a.ab.empty() ? check::check_dirs(a.dirs[0], a.dirs[1], gates) : run_ab(a, gates);
  r.command = command_line(a);
  const std::string text = render(r, a.format);
  if (a.out_path.empty()) {
    fmt::print("{}", text);
  } else {
    output::write_file_atomic(a.out_path, text);
    fmt::print(stderr, "{}", check::render_text(r));
  }
  append_step_summary(r);
  return check::exit_code_of(r);
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<CheckArgs>();
  auto* sub = app.add_subcommand(
      "check", "Gate a candidate against a baseline for CI: exit 0 pass, 3 regression, 4 "
               "inconclusive");
  sub->add_option("dirs", a->dirs, "BASELINE CANDIDATE: run or sweep directories");
  sub->add_option("--ab", a->ab,
                  "Two `llmprof train` (or two `llmprof sweep`) command lines, run "
                  "alternately: timing is gated only so")
      ->expected(2);
  sub->add_option("--repetitions", a->repetitions,
                  "--ab: rounds of both commands (default 10, at least 6: a 95% interval)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000}));
  sub->add_option("--max", a->max, "NAME=AMOUNT: a lower-is-better figure's bound (step_ms=+5%)");
  sub->add_option("--min", a->min,
                  "NAME=AMOUNT: a higher-is-better figure's bound (tokens_per_s=-5%)");
  sub->add_option("--within", a->within, "NAME=TOLERANCE: |candidate - baseline| (loss@20=1e-4)");
  sub->add_option("--format,-f", a->format, "text (default), md, json or junit");
  sub->add_option("--out,-o", a->out_path, "Write the rendering to FILE (atomically)");
  sub->add_flag("--figures", a->figures, "List the figures check knows and exit");
  sub->footer(
      "Amounts are relative (%) or absolute; without a sign, the move allowed in the figure's\n"
      "bad direction. Between two directories, deterministic figures and memory are gated and\n"
      "timing is reported, never gated; with --ab, timing is judged by the median of the paired\n"
      "ratios: its order-statistic interval (at least 95%; the confidence achieved is printed) "
      "and\n"
      "exact sign tests, Holm-corrected over timing gates; at least 6 rounds. Two sweep\n"
      "commands are judged point by point, Holm over points x timing gates. Without gates:\n"
      "  directories: --within parameters=0 --within flops_per_step=0 --max peak_rss_bytes=+10%\n"
      "               --max val_loss=+0.02 --max step_ms=+5% (reported)\n"
      "  --ab:        --max step_ms=+5%\n"
      "$GITHUB_STEP_SUMMARY, when set, gets the Markdown table appended. Examples:\n"
      "  llmprof check runs/base runs/head --within loss@20=1e-4 --within op_calls_per_step=0\n"
      "  llmprof check --ab \"base/llmprof train -c configs/ci_smoke.yaml\" \\\n"
      "                \"head/llmprof train -c configs/ci_smoke.yaml\" --repetitions 10 \\\n"
      "                --max step_ms=+10% --format junit --out check.xml\n"
      "Exit codes: 0 pass, 3 regression, 4 inconclusive, 2 bad input, 1 a command failed.");
  sub->callback([a, &exit_code]() { exit_code = run_check(*a); });
}

}  // namespace llmprof::cli
