#include "checkpoint_args.h"

namespace llmprof::cli {

void add_checkpoint_options(CLI::App& sub, CheckpointArgs& args, const CheckpointHelp& help) {
  sub.add_option("--config,-c", args.config_path, "Config file (YAML or JSON)")->required();
  sub.add_option("--checkpoint", args.checkpoint,
                 "Checkpoint or run directory (default: model.init_from)");
  sub.add_option("--set", args.overrides, help.set);
  sub.add_option("--out", args.out_dir, "Parent directory of the results (overrides output.dir)");
  sub.add_flag("--quiet,-q", args.quiet, help.quiet);
  sub.add_flag("--allow-init-weights", args.allow_init_weights, help.init_weights);
}

std::vector<std::string> checkpoint_command_line(const char* command,
                                                 const CheckpointArgs& args,
                                                 bool record_quiet) {
  std::vector<std::string> cl{"llmprof", command, "--config", args.config_path};
  if (!args.checkpoint.empty()) cl.insert(cl.end(), {"--checkpoint", args.checkpoint});
  for (const auto& o : args.overrides) cl.insert(cl.end(), {"--set", o});
  if (!args.out_dir.empty()) cl.insert(cl.end(), {"--out", args.out_dir});
  if (record_quiet && args.quiet) cl.push_back("--quiet");
  if (args.allow_init_weights) cl.push_back("--allow-init-weights");
  return cl;
}

}  // namespace llmprof::cli
