#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint_args.h"
#include "commands.h"
#include "llmprof/eval/bench.h"

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

int run_bench_command(const CheckpointArgs& args, const std::vector<std::string>& command_line) {
  eval::BenchOptions opts;
  const config::Config cfg = load_checkpoint_command(args, "bench", command_line, opts);
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
  auto args = std::make_shared<CheckpointArgs>();
  auto* sub = app.add_subcommand(
      "bench",
      "Inference speed (latency percentiles, throughput, KV-cache generation) and "
      "quality of fp32, bf16 and int8 variants per batch size");
  add_checkpoint_options(
      *sub, *args,
      {"Override a key: --set bench.batch_sizes=1,8,32 (repeatable)",
       "No table; warnings and errors only on stderr",
       "Bench a checkpoint that lacks tensors of the model (a task head) anyway; quality "
       "figures are then marked 'partly initial'"});
  sub->footer(
      "Example: llmprof bench -c configs/quickstart.yaml --checkpoint runs/quickstart-run "
      "--set bench.variants=fp32,int8");
  sub->callback([args, &exit_code]() {
    exit_code = run_bench_command(*args, checkpoint_command_line("bench", *args, true));
  });
}

}  // namespace llmprof::cli
