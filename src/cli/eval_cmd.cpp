#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "checkpoint_args.h"
#include "commands.h"
#include "llmprof/eval/evaluate.h"

namespace llmprof::cli {

namespace {

int run_eval_command(const CheckpointArgs& args, const std::vector<std::string>& command_line) {
  eval::EvalOptions opts;
  const config::Config cfg = load_checkpoint_command(args, "eval", command_line, opts);
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
  auto args = std::make_shared<CheckpointArgs>();
  auto* sub = app.add_subcommand(
      "eval", "Loss and perplexity (or accuracy) on the validation split and eval.paths sets");
  add_checkpoint_options(
      *sub, *args,
      {"Override a key: --set eval.max_batches=20 (repeatable)",
       "Warnings and errors only on stderr",
       "Evaluate a checkpoint that lacks tensors of the model (a task head) anyway; "
       "results are marked 'partly initial'"});
  sub->footer(
      "Example: llmprof eval -c configs/distilbert_mlm_wikitext.yaml --checkpoint runs/mlm-run");
  // eval.json records the command without --quiet, which changes nothing it writes.
  sub->callback([args, &exit_code]() {
    exit_code = run_eval_command(*args, checkpoint_command_line("eval", *args, false));
  });
}

}  // namespace llmprof::cli
