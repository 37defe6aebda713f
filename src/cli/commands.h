// One CLI11 subcommand per file: each registers itself on the app and, when chosen, runs and
// stores its exit code. Commands are thin: parse, fill options, call the library.
#pragma once

#include <CLI/CLI.hpp>

namespace llmprof::cli {

// llmprof train --config F [--set k=v]... [--out DIR] [--quiet]
void add_train_command(CLI::App& app, int& exit_code);

// llmprof config show FILE [--set k=v]... | llmprof config keys
void add_config_command(CLI::App& app, int& exit_code);

}  // namespace llmprof::cli
