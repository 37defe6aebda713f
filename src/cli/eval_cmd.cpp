#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/config/schema.h"
#include "llmprof/eval/evaluate.h"
#include "llmprof/output/log.h"

namespace llmprof::cli {

namespace {

struct EvalArgs {
  std::string config_path;
  std::string checkpoint;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool quiet = false;
  bool allow_init_weights = false;
};

int run_eval_command(const EvalArgs& args, const std::vector<std::string>& command_line) {
  config::Config cfg = config::load_config(args.config_path, args.overrides);
  output::init_logging(args.quiet);
  eval::EvalOptions opts;
  opts.checkpoint = args.checkpoint;
  opts.output_dir = args.out_dir;
  opts.run_label = std::filesystem::path(args.config_path).stem().string() + "-eval";
  opts.command_line = command_line;
  opts.allow_init_weights = args.allow_init_weights;
  const eval::EvalResult r = eval::run_eval(cfg, opts);

  fmt::print("results:    {}\n", r.run_dir);
  fmt::print("checkpoint: {}\n", r.checkpoint.empty() ? "none (initial weights)" : r.checkpoint);
  if (r.weights != "checkpoint") {
    fmt::print("weights:    {} -- these figures come from randomly initialised weights\n",
               r.weights);
  }
  // Classification reports accuracy, language models perplexity: one column, the right one.
  const char* metric = r.reports_perplexity ? "perplexity" : "accuracy";
  fmt::print("\n| set | sequences | loss | {} | samples/s | tokens/s |\n", metric);
  fmt::print("|---|---|---|---|---|---|\n");
  for (const auto& s : r.sets) {
    const std::optional<double> value = r.reports_perplexity ? s.perplexity : s.accuracy;
    const std::string sampled =
        s.sampling.empty() ? "" : fmt::format(" of {}", s.available_sequences);
    fmt::print("| {} | {}{} | {:.4f} | {} | {:.1f} | {:.0f} |\n", s.name, s.sequences, sampled,
               s.loss, value ? fmt::format(r.reports_perplexity ? "{:.2f}" : "{:.4f}", *value)
                             : "-",
               s.samples_per_s, s.tokens_per_s);
  }
  for (const auto& s : r.sets) {
    if (!s.sampling.empty()) fmt::print("{}: {}\n", s.name, s.sampling);
  }
  return 0;
}

}  // namespace

void add_eval_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<EvalArgs>();
  auto* sub = app.add_subcommand(
      "eval", "Loss and perplexity (or accuracy) on the validation split and eval.paths sets");
  sub->add_option("--config,-c", args->config_path, "Config file (YAML or JSON)")->required();
  sub->add_option("--checkpoint", args->checkpoint,
                  "Checkpoint or run directory (default: model.init_from)");
  sub->add_option("--set", args->overrides, "Override a key: --set eval.max_batches=20 (repeatable)");
  sub->add_option("--out", args->out_dir, "Parent directory of the results (overrides output.dir)");
  sub->add_flag("--quiet,-q", args->quiet, "Warnings and errors only on stderr");
  sub->add_flag("--allow-init-weights", args->allow_init_weights,
                "Evaluate a checkpoint that lacks tensors of the model (a task head) anyway; "
                "results are marked 'partly initial'");
  sub->footer(
      "Example: llmprof eval -c configs/distilbert_mlm_wikitext.yaml --checkpoint runs/mlm-run");
  sub->callback([args, &exit_code]() {
    std::vector<std::string> cl{"llmprof", "eval", "--config", args->config_path};
    if (!args->checkpoint.empty()) cl.insert(cl.end(), {"--checkpoint", args->checkpoint});
    for (const auto& o : args->overrides) cl.insert(cl.end(), {"--set", o});
    if (!args->out_dir.empty()) cl.insert(cl.end(), {"--out", args->out_dir});
    if (args->allow_init_weights) cl.push_back("--allow-init-weights");
    exit_code = run_eval_command(*args, cl);
  });
}

}  // namespace llmprof::cli
