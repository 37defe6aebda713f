// One CLI11 subcommand per file: each registers itself on the app and, when chosen, runs and
// stores its exit code. Commands are thin: parse, fill options, call the library.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace llmprof::config {
struct Config;
}

namespace llmprof::cli {

// An option's check that refuses an empty value (--device ''), which would otherwise read as the
// option left out or as some other value: "--device: the value is empty (''); give <expected>".
inline CLI::Validator non_empty(const std::string& expected) {
  return CLI::Validator(
      [expected](std::string& value) {
        return value.empty() ? "the value is empty (''); give " + expected : std::string();
      },
      "", "non_empty");
}

// llmprof train --config F [--set k=v]... [--out DIR] [--quiet]
void add_train_command(CLI::App& app, int& exit_code);

// llmprof eval --config F [--checkpoint C] [--set k=v]... [--out DIR]
void add_eval_command(CLI::App& app, int& exit_code);

// llmprof bench --config F [--checkpoint C] [--set k=v]... [--out DIR] [--quiet]
void add_bench_command(CLI::App& app, int& exit_code);

// llmprof config show FILE [--set k=v]... | llmprof config keys
void add_config_command(CLI::App& app, int& exit_code);

// llmprof sweep --config F [--grid k=v1,v2]... [--set k=v]... [--repeat R] [--jobs J] [--out D]
void add_sweep_command(CLI::App& app, int& exit_code);

// llmprof peak [--threads N] [--precision fp32|bf16]
void add_peak_command(CLI::App& app, int& exit_code);

// llmprof report RUN_OR_SWEEP_DIR... [--format md|csv|json] [--compare A B] [--out FILE]
void add_report_command(CLI::App& app, int& exit_code);

// llmprof export CHECKPOINT --format hf --out DIR
void add_export_command(CLI::App& app, int& exit_code);

// llmprof plot RUN_OR_SWEEP_DIR... [--out DIR] [--format png|svg]
void add_plot_command(CLI::App& app, int& exit_code);

// llmprof tokenize --tokenizer tokenizer.json (--text S... | --texts-json F) [--plain] (hidden)
void add_tokenize_command(CLI::App& app, int& exit_code);

// llmprof plan --config F [--set k=v]... [--device D] [--world-size W] [--format text|json]
void add_plan_command(CLI::App& app, int& exit_code);
// llmprof sweep --plan: why cfg's training step is predicted not to fit `device` (a name plan
// --device takes; "" = the config's device), or "" when it fits (plan_cmd.cpp).
std::string plan_misfit(const config::Config& cfg, const std::string& device);

// llmprof check BASELINE CANDIDATE [--max|--min|--within NAME=AMOUNT]... | --ab CMD_A CMD_B
void add_check_command(CLI::App& app, int& exit_code);

// llmprof tune --config F [--set k=v]... [--space K=V1,V2]... [--budget 20m] [--out DIR]
void add_tune_command(CLI::App& app, int& exit_code);

}  // namespace llmprof::cli
