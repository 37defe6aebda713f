#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/config/schema.h"
#include "llmprof/sweep/slurm.h"

namespace llmprof::cli {

void add_config_command(CLI::App& app, int& exit_code) {
  auto* cfg_cmd = app.add_subcommand("config", "Show the resolved config or list every key");
  cfg_cmd->require_subcommand(1);
  cfg_cmd->footer(
      "Examples:\n"
      "  llmprof config show configs/quickstart.yaml --set model.n_layer=6\n"
      "  llmprof config keys");

  struct ShowArgs {
    std::string path;
    std::vector<std::string> overrides;
  };
  auto show_args = std::make_shared<ShowArgs>();
  auto* show = cfg_cmd->add_subcommand("show", "Print the resolved config (file + --set) as YAML");
  show->add_option("file", show_args->path, "Config file (YAML or JSON)")->required();
  show->add_option("--set", show_args->overrides, "Override a key (repeatable)");
  show->callback([show_args, &exit_code]() {
    config::Config cfg = config::load_config(show_args->path, show_args->overrides);
    for (const std::string& note : cfg.notes) fmt::print(stderr, "llmprof: note: {}\n", note);
    fmt::print("{}", config::to_yaml(cfg));
    exit_code = 0;
  });

  auto* keys = cfg_cmd->add_subcommand("keys", "List every key with its type, default and doc");
  keys->callback([&exit_code]() {
    std::vector<config::KeyInfo> all = config::list_keys();
    // The sweep section: read by `llmprof sweep` only, listed after the run's keys.
    for (config::KeyInfo& k : sweep::sweep_section_keys()) all.push_back(std::move(k));
    size_t w_path = 4, w_type = 4, w_def = 7, w_range = 5;
    for (const auto& k : all) {
      w_path = std::max(w_path, k.path.size());
      w_type = std::max(w_type, k.type.size());
      w_def = std::max(w_def, k.default_value.size());
      w_range = std::max(w_range, k.range.size());
    }
    fmt::print("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", "key", w_path, "type", w_type, "default",
               w_def, "range", w_range, "doc");
    for (const auto& k : all) {
      fmt::print("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", k.path, w_path, k.type, w_type,
                 k.default_value, w_def, k.range, w_range, k.doc);
    }
    exit_code = 0;
  });
}

}  // namespace llmprof::cli
