// What `llmprof eval` and `llmprof bench` share: the options that name a config and the
// checkpoint to load, and the command line recorded in the result directory.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "llmprof/config/schema.h"
#include "llmprof/output/log.h"

namespace llmprof::cli {

struct CheckpointArgs {
  std::string config_path;
  std::string checkpoint;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool quiet = false;
  bool allow_init_weights = false;
};

// The help texts that differ between the commands.
struct CheckpointHelp {
  const char* set;           // --set, with an example key of the command
  const char* quiet;         // --quiet
  const char* init_weights;  // --allow-init-weights
};

// Adds --config, --checkpoint, --set, --out, --quiet and --allow-init-weights to sub.
void add_checkpoint_options(CLI::App& sub, CheckpointArgs& args, const CheckpointHelp& help);

// `llmprof <command> --config F [--checkpoint C] [--set k=v]... [--out D] [--quiet]
// [--allow-init-weights]` as given (--quiet only when record_quiet), for the result's context.
std::vector<std::string> checkpoint_command_line(const char* command,
                                                 const CheckpointArgs& args,
                                                 bool record_quiet);

// The config with the --set overrides, logging set up, and opts (EvalOptions or BenchOptions)
// filled from args: run label "<config stem>-<command>".
template <typename Options>
config::Config load_checkpoint_command(const CheckpointArgs& args,
                                       const char* command,
                                       const std::vector<std::string>& command_line,
                                       Options& opts) {
  config::Config cfg = config::load_config(args.config_path, args.overrides);
  output::init_logging(args.quiet);
  opts.checkpoint = args.checkpoint;
  opts.output_dir = args.out_dir;
  opts.run_label = std::filesystem::path(args.config_path).stem().string() + "-" + command;
  opts.command_line = command_line;
  opts.allow_init_weights = args.allow_init_weights;
  return cfg;
}

}  // namespace llmprof::cli
