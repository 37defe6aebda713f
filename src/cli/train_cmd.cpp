#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/log.h"
#include "llmprof/train/trainer.h"
#include "train_launch.h"

namespace llmprof::cli {

namespace {

struct TrainArgs {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool quiet = false;
  int64_t nproc = 0;  // --nproc: 0 not given; 1 in this process; N > 1 local ranks
};

std::string fmt_opt(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("null");
}

// A run that measured no step (every step warm-up, or none completed) says so, with the count and
// the key to change, in place of the step time, throughput and MFU ("null ms").
void print_unmeasured(int64_t steps, int64_t warmup_steps) {
  if (steps == 0) {
    fmt::print("step time:  not measured: no step completed\n");
  } else {
    fmt::print(
        "step time:  not measured: all {} steps were warm-up (profile.warmup_steps={}), which "
        "the statistics leave out\n"
        "            measure some: --set profile.warmup_steps=N with N < {}, or run more than {} "
        "steps (schedule.max_steps)\n",
        steps, warmup_steps, steps, warmup_steps);
  }
  fmt::print("throughput: not measured\nMFU:        not measured\n");
}

// The run's lines. A data-parallel run's rank 0 prints the top directory and the global figures
// (all ranks' tokens over the slowest rank's step) with its own beside them; another rank prints
// its own directory and figures, labelled.
void print_result(const train::TrainResult& r, int64_t warmup_steps) {
  const bool dp = r.world_size > 1;
  const bool top = dp && r.run_dir != r.rank_dir;
  fmt::print("run:        {}{}\n", r.run_dir,
             !dp   ? ""
             : top ? fmt::format(" ({} ranks)", r.world_size)
                   : fmt::format(" (one rank of {})", r.world_size));
  fmt::print("status:     {}{}\n", config::name(r.status),
             r.message.empty() ? "" : " (" + r.message + ")");
  fmt::print("steps:      {}\n", r.steps_completed);
  if (!r.median_step_ms) {
    print_unmeasured(r.steps_completed, warmup_steps);
  } else {
    const std::string scope = !dp ? "" : top ? ", global: the slowest rank's" : ", this rank's";
    fmt::print("step time:  {} ms (median after warm-up{})\n",
               fmt_opt(r.median_step_ms, "{:.2f}"), scope);
    if (top) {
      fmt::print(
          "throughput: {} tokens/s (global: all {} ranks' tokens over the slowest rank's "
          "step; rank 0 alone {})\n",
          fmt_opt(r.tokens_per_s, "{:.0f}"), r.world_size, fmt_opt(r.rank_tokens_per_s, "{:.0f}"));
    } else {
      fmt::print("throughput: {} tokens/s{}\n", fmt_opt(r.tokens_per_s, "{:.0f}"),
                 dp ? " (this rank's)" : "");
    }
    fmt::print("MFU:        {}{}\n", r.mfu ? fmt::format("{:.1f}%", *r.mfu * 100) : "null",
               top ? " (against all ranks' peak)" : "");
  }
  fmt::print("loss:       train {}, val {}\n",
             r.steps_completed > 0
                 ? fmt::format("{:.4f}{}", r.final_train_loss,
                               top ? " (last step, mean of the ranks')" : " (last step)")
                 : std::string("none (no step completed)"),
             r.final_val_loss ? fmt::format("{:.4f}", *r.final_val_loss)
                              : std::string("none (no evaluation ran)"));
}

// The exit code of a finished run: 0 completed, 1 diverged or failed, 130 interrupted.
int exit_code_for(const train::TrainResult& r) {
  switch (r.status) {
    case config::RunStatus::kCompleted:
      return kExitOk;
    case config::RunStatus::kInterrupted:
      return 130;
    case config::RunStatus::kDiverged:
    case config::RunStatus::kFailed:
      break;
  }
  return kExitRuntime;
}

int run_train(const TrainArgs& args, const std::vector<std::string>& command_line) {
  config::Config cfg = config::load_config(args.config_path, args.overrides);
  output::init_logging(args.quiet);
  train::TrainOptions opts;
  opts.output_dir = args.out_dir;
  opts.quiet = args.quiet;
  opts.run_label = std::filesystem::path(args.config_path).stem().string();
  opts.command_line = command_line;
  train::TrainResult r = train::run_training(cfg, opts);

  print_result(r, cfg.profile.warmup_steps);
  if (!r.top_ops.empty()) fmt::print("top ops:\n");
  for (const auto& line : r.top_ops) fmt::print("  {}\n", line);
  return exit_code_for(r);
}

}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TrainArgs>();
  auto* sub = app.add_subcommand("train", "Train a model through the instrumented loop");
  sub->add_option("--config,-c", args->config_path, "Config file (YAML or JSON)")->required();
  sub->add_option("--set", args->overrides, "Override a key: --set model.n_layer=6 (repeatable)");
  sub->add_option("--out", args->out_dir, "Parent directory of the run (overrides output.dir)");
  sub->add_flag("--quiet,-q", args->quiet, "No progress line; warnings and errors only");
  sub->add_option("--nproc", args->nproc,
                  "Data-parallel ranks on this machine (re-runs llmprof once per rank; the "
                  "cores are divided among them unless threads is set)");
  sub->footer(
      "Examples: llmprof train --config configs/quickstart.yaml --set optim.lr=3e-4\n"
      "          llmprof train --config configs/quickstart.yaml --nproc 2");
  sub->callback([args, sub, &app, &exit_code]() {
    std::vector<std::string> cl{"llmprof", "train", "--config", args->config_path};
    for (const auto& o : args->overrides) {
      cl.push_back("--set");
      cl.push_back(o);
    }
    if (!args->out_dir.empty()) cl.insert(cl.end(), {"--out", args->out_dir});
    (void)app;
    if (args->nproc < 0 || (args->nproc == 0 && sub->count("--nproc") > 0)) {
      throw UsageError(fmt::format("--nproc {}: give 1 or more ranks", args->nproc));
    }
    exit_code = args->nproc > 1 ? launch_train(args->config_path, args->overrides, args->nproc)
                                : run_train(*args, cl);
  });
}

}  // namespace llmprof::cli
