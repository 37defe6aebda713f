#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/config/schema.h"
#include "llmprof/eval/bench.h"
#include "llmprof/output/log.h"

namespace llmprof::cli {

namespace {

std::string fmt_opt(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
}

// The stdout table, markdown like llmprof eval's.
void print_table(const eval::BenchResult& r) {
  const bool accuracy = r.reports_accuracy, generation = r.generation;
  fmt::print("results: {}\n\n", r.run_dir);
  fmt::print(
      "| variant | batch | samples/s | tokens/s | p50 ms | p99 ms | loss | {} | weight MiB |{}\n",
      accuracy ? "acc" : "ppl", generation ? " ttft ms | ms/token | gen tokens/s |" : "");
  fmt::print("|---|---|---|---|---|---|---|---|---|{}\n", generation ? "---|---|---|" : "");
  for (const eval::BenchRow& row : r.rows) {
    fmt::print("| {} | {} | {:.1f} | {:.0f} | {:.3f} | {:.3f} | {} | {} | {:.3f} |",
               config::name(row.variant), row.batch, row.samples_per_s, row.tokens_per_s,
               row.latency.p50_ms, row.latency.p99_ms, fmt_opt(row.loss, "{:.4f}"),
               accuracy ? fmt_opt(row.accuracy, "{:.4f}") : fmt_opt(row.perplexity, "{:.2f}"),
               static_cast<double>(row.weight_bytes) / (1024.0 * 1024.0));
    if (generation) {
      fmt::print(" {} | {} | {} |", fmt_opt(row.ttft_ms, "{:.3f}"),
                 fmt_opt(row.per_token_p50_ms, "{:.3f}"),
                 fmt_opt(row.generate_tokens_per_s, "{:.0f}"));
    }
    fmt::print("\n");
  }
}

struct BenchArgs {
  std::string config_path;
  std::string checkpoint;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool quiet = false;
  bool allow_init_weights = false;
};

int run_bench_command(const BenchArgs& args, const std::vector<std::string>& command_line) {
  config::Config cfg = config::load_config(args.config_path, args.overrides);
  output::init_logging(args.quiet);
  eval::BenchOptions opts;
  opts.checkpoint = args.checkpoint;
  opts.output_dir = args.out_dir;
  opts.run_label = std::filesystem::path(args.config_path).stem().string() + "-bench";
  opts.command_line = command_line;
  opts.allow_init_weights = args.allow_init_weights;
  const eval::BenchResult r = eval::run_bench(cfg, opts);
  if (args.quiet) {
    fmt::print("results: {}\n", r.run_dir);
  } else {
    print_table(r);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  auto* sub = app.add_subcommand(
      "bench",
      "Inference speed (latency percentiles, throughput, KV-cache generation) and "
      "quality of fp32, bf16 and int8 variants per batch size");
  sub->add_option("--config,-c", args->config_path, "Config file (YAML or JSON)")->required();
  sub->add_option("--checkpoint", args->checkpoint,
                  "Checkpoint or run directory (default: model.init_from)");
  sub->add_option("--set", args->overrides,
                  "Override a key: --set bench.batch_sizes=1,8,32 (repeatable)");
  sub->add_option("--out", args->out_dir, "Parent directory of the results (overrides output.dir)");
  sub->add_flag("--quiet,-q", args->quiet, "No table; warnings and errors only on stderr");
  sub->add_flag("--allow-init-weights", args->allow_init_weights,
                "Bench a checkpoint that lacks tensors of the model (a task head) anyway; quality "
                "figures are then marked 'partly initial'");
  sub->footer(
      "Example: llmprof bench -c configs/quickstart.yaml --checkpoint runs/quickstart-run "
      "--set bench.variants=fp32,int8");
  sub->callback([args, &exit_code]() {
    std::vector<std::string> cl{"llmprof", "bench", "--config", args->config_path};
    if (!args->checkpoint.empty()) cl.insert(cl.end(), {"--checkpoint", args->checkpoint});
    for (const auto& o : args->overrides) cl.insert(cl.end(), {"--set", o});
    if (!args->out_dir.empty()) cl.insert(cl.end(), {"--out", args->out_dir});
    if (args->quiet) cl.push_back("--quiet");
    if (args->allow_init_weights) cl.push_back("--allow-init-weights");
    exit_code = run_bench_command(*args, cl);
  });
}

}  // namespace llmprof::cli
