// llmprof tune: the fastest configuration that fits, found by measuring (llmprof/tune/tune.h).
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/error.h"
#include "llmprof/process/child.h"
#include "llmprof/tune/tune.h"

namespace llmprof::cli {

namespace {

struct TuneArgs {
  tune::TuneOptions options;
  std::string budget = "20m";
  int64_t steps = 0;
};

std::string minutes(double s) {
  const int64_t whole = static_cast<int64_t>(s < 0 ? 0 : s);
  return fmt::format("{}m{:02}s", whole / 60, whole % 60);
}

int run_tune_command(TuneArgs& a) {
  tune::TuneOptions& o = a.options;
  o.budget_s = tune::parse_budget_s(a.budget);
  if (a.steps > 0) o.steps = a.steps;
  o.executable = process::self_executable();
  auto progress = [](const tune::Progress& p) {
    fmt::print(stderr, "tune: {}; {} candidate{} left, {} of {} left\n", p.what, p.candidates_left,
               p.candidates_left == 1 ? "" : "s", minutes(p.budget_s - p.spent_s),
               minutes(p.budget_s));
  };
  const rundir::TuneDoc d = tune::run_tune(o, progress);
  const std::string dir = tune::tune_dir(o);
  fmt::print("{}", tune::tune_table_markdown(d));
  fmt::print(stderr, "tune: {} ({}/tune.json{})\n", d.conclusion, dir,
             o.plan_only ? "" : fmt::format(", {}/tuned.yaml", dir));
  return kExitOk;
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<TuneArgs>();
  tune::TuneOptions& o = a->options;
  auto* sub = app.add_subcommand(
      "tune",
      "Find the fastest configuration that fits by measuring: candidates the planner says fit, "
      "raced against the starting config by interleaved A/B repetitions (successive halving)");
  sub->add_option("-c,--config", o.config_path, "Config file (YAML or JSON)")->required();
  sub->add_option("--set", o.sets, "Override a key for every candidate and tuned.yaml");
  sub->add_option("--objective", o.objective,
                  "tokens_per_s (default) | step_ms | energy_per_token (needs an energy "
                  "source: RAPL, NVML or energy.cpu_tdp_w's estimate)");
  sub->add_option("--budget", a->budget, "Time for the repetitions: 90s, 20m (default), 1h30m");
  sub->add_option("--space", o.space,
                  "KEY=V1,V2,...: a knob and its values (repeat); without it, generated from "
                  "the config and the device");
  sub->add_flag("--keep-numerics", o.keep_numerics,
                "Search only knobs that keep the loss after N steps (checked)");
  sub->add_option("--loss-tolerance", o.loss_tolerance,
                  "Relative loss@N difference a numerics-keeping knob may show (default 0.01)");
  sub->add_option("--steps", a->steps, "schedule.max_steps of each repetition (default 30)");
  sub->add_option("--device", o.device,
                  "The planner's device (cpu, h100-80gb, a byte count, ...); default the "
                  "config's")
      ->check(non_empty("a device name"));
  sub->add_option("--nproc", o.nproc, "Rank processes per repetition (train --nproc)")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  sub->add_option("--rounds", o.search.max_rounds,
                  "The most rounds a candidate races (default 12: a first rung of 6, the fewest a "
                  "95% interval needs, then 12 for the better half)")
      ->check(CLI::Range(ab::kMinRepetitions, int64_t{1000}));
  sub->add_option("--confirm-rounds", o.search.confirm_rounds,
                  "Rounds the winner is confirmed over against the start (default 6, the fewest)")
      ->check(CLI::Range(ab::kMinRepetitions, int64_t{1000}));
  sub->add_option("--out,-o", o.out_dir,
                  "Tune directory (default <output.dir>/tune-<config stem>); a search there of "
                  "the same inputs is resumed");
  sub->add_flag("--plan-only", o.plan_only, "Plan the candidates and write tune.json; run none");
  sub->add_flag("--exhaustive", o.search.exhaustive,
                "Measure every candidate over --confirm-rounds rounds, dropping none (the grid "
                "a search is judged against)");
  sub->footer(
      "Writes DIR/tune.json (every candidate: sets, planned memory, outcome, repetitions, ratio\n"
      "and interval, loss difference, time), DIR/tuned.yaml (for llmprof train) and DIR/tune.md.\n"
      "Candidates the planner says do not fit are never run. Ctrl-C or a kill keeps tune.json;\n"
      "the same command resumes without measuring anything twice.\n"
      "Exit codes: 0 done, 2 bad input, 1 the starting config does not train, 130 interrupted.");
  sub->callback([a, &exit_code]() { exit_code = run_tune_command(*a); });
}

}  // namespace llmprof::cli
