#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/error.h"
#include "llmprof/output/log.h"
#include "llmprof/sweep/sweep.h"

namespace llmprof::cli {

namespace {

// The closing lines on stdout; returns the exit code: 130 when the sweep was stopped, 1 when a
// point failed (or was stopped by something else), else 0.
int report(const sweep::SweepOutcome& o) {
  std::string counts =
      fmt::format("{} completed, {} diverged, {} failed", o.completed, o.diverged, o.failed);
  if (o.interrupted > 0) counts += fmt::format(", {} interrupted", o.interrupted);
  if (o.not_run > 0) counts += fmt::format(", {} not run", o.not_run);
  fmt::print("sweep:   {}\n", o.sweep_dir);
  fmt::print("points:  {} ({}; {} reused from earlier runs)\n", o.points, counts, o.reused);
  fmt::print("results: {}/sweep.csv\n", o.sweep_dir);
  if (o.stopped) return 130;
  return o.failed + o.interrupted > 0 ? kExitRuntime : kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<sweep::SweepOptions>();
  auto* sub = app.add_subcommand(
      "sweep", "Train once per grid point (each its own process) and tabulate the summaries");
  sub->add_option("--config,-c", opts->config_path,
                  "Base config (YAML or JSON); its `sweep: {grid: ...}` section gives a grid")
      ->required();
  sub->add_option("--grid", opts->grid_args,
                  "Swept key and values: --grid optim.lr=1e-4,3e-4 (repeatable; replaces the "
                  "file's grid key of the same name). Default grid when none: "
                  "train.batch_size=8,16,32 x optim.lr=1e-4,3e-4,1e-3");
  sub->add_option("--set", opts->overrides, "Override a key for every point (repeatable)");
  sub->add_option("--repeat", opts->repeat, "Runs per grid point (default 1)");
  sub->add_option("--jobs,-j", opts->jobs,
                  "Points run at once (default 1); threads per point = max(1, cores / jobs); "
                  "clamped to the core count");
  sub->add_option("--out", opts->out_dir, "Parent of the sweep directory (default output.dir)");
  sub->add_option("--name", opts->name, "Sweep directory name (default sweep-<config stem>)");
  sub->add_flag("--quiet,-q", opts->quiet, "No progress; warnings and errors only");
  sub->footer(
      "Writes <out>/<name>/sweep.csv (one row per finished point) and sweep.json; each point's\n"
      "run goes to <out>/<name>/runs/<point id>/ and its output to runs/<point id>.log.\n"
      "Re-running the same command resumes: completed and diverged points are kept, failed and\n"
      "interrupted ones run again (the earlier attempt is renamed <point id>.attempt<N>).\n"
      "Exit: 0 all completed or diverged, 1 any failed, 2 bad usage/config, 130 interrupted.\n"
      "Example: llmprof sweep --config configs/sweep_quick.yaml --jobs 2");
  sub->callback([opts, &exit_code]() {
    std::vector<std::string>& cl = opts->command_line;
    cl = {"llmprof", "sweep", "--config", opts->config_path};
    for (const auto& g : opts->grid_args) cl.insert(cl.end(), {"--grid", g});
    for (const auto& s : opts->overrides) cl.insert(cl.end(), {"--set", s});
    cl.insert(cl.end(),
              {"--repeat", std::to_string(opts->repeat), "--jobs", std::to_string(opts->jobs)});
    if (!opts->out_dir.empty()) cl.insert(cl.end(), {"--out", opts->out_dir});
    if (!opts->name.empty()) cl.insert(cl.end(), {"--name", opts->name});
    if (opts->quiet) cl.push_back("--quiet");
    output::init_logging(opts->quiet);
    exit_code = report(sweep::run_sweep(*opts));
  });
}

}  // namespace llmprof::cli
