#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
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
};

int run_eval_command(const EvalArgs& args, const std::vector<std::string>& command_line) {
  config::Config cfg = config::load_config(args.config_path, args.overrides);
  output::init_logging(args.quiet);
  eval::EvalOptions opts;
  opts.checkpoint = args.checkpoint;
  opts.output_dir = args.out_dir;
  opts.run_label = std::filesystem::path(args.config_path).stem().string() + "-eval";
  opts.command_line = command_line;
  const eval::EvalResult r = eval::run_eval(cfg, opts);

  fmt::print("results:    {}\n", r.run_dir);
  fmt::print("checkpoint: {}\n", r.checkpoint.empty() ? "none (initial weights)" : r.checkpoint);
  fmt::print("\n| set | sequences | loss | perplexity | accuracy | samples/s | tokens/s |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  for (const auto& s : r.sets) {
    fmt::print("| {} | {} | {:.4f} | {:.2f} | {} | {:.1f} | {:.0f} |\n", s.name, s.sequences,
               s.loss, s.perplexity, s.accuracy ? fmt::format("{:.4f}", *s.accuracy) : "-",
               s.samples_per_s, s.tokens_per_s);
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
  sub->footer(
      "Example: llmprof eval -c configs/distilbert_mlm_wikitext.yaml --checkpoint runs/mlm-run");
  sub->callback([args, &exit_code]() {
    std::vector<std::string> cl{"llmprof", "eval", "--config", args->config_path};
    if (!args->checkpoint.empty()) cl.insert(cl.end(), {"--checkpoint", args->checkpoint});
    for (const auto& o : args->overrides) cl.insert(cl.end(), {"--set", o});
    if (!args->out_dir.empty()) cl.insert(cl.end(), {"--out", args->out_dir});
    exit_code = run_eval_command(*args, cl);
  });
}

}  // namespace llmprof::cli
