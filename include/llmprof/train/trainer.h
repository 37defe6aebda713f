// llmprof train: builds the model and data from a Config, trains through the instrumented loop
// and writes the run directory (config.yaml, env.json, steps.csv, eval.csv, log.txt,
// summary.json). Torch-free header: the CLI includes it without paying for <torch/torch.h>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::config {
struct Config;
}

namespace llmprof::train {

struct TrainOptions {
  std::string output_dir;              // overrides output.dir when non-empty (--out)
  std::string run_label = "run";       // stem of an auto-named run directory
  bool quiet = false;                  // no progress line; warnings only on stderr
  std::vector<std::string> command_line;  // recorded in env.json
};

struct TrainResult {
  // The run: a data-parallel run's top directory on rank 0 (its figures global: all ranks' tokens
  // over the slowest rank's step), the rank's own directory on the others.
  std::string run_dir;
  int world_size = 1;
  std::string rank_dir;  // data-parallel: this rank's own directory
  // data-parallel, rank 0: its own figures beside the global ones
  std::optional<double> rank_tokens_per_s, rank_median_step_ms;
  config::RunStatus status = config::RunStatus::kCompleted;  // config::name prints it
  std::string message;     // why, when not completed
  int64_t steps_completed = 0;
  double final_train_loss = 0;
  std::optional<double> final_val_loss;
  std::optional<double> median_step_ms;   // null when every step was warm-up
  std::optional<double> tokens_per_s;
  std::optional<double> mfu;
  std::vector<std::string> top_ops;  // ops level: the top ops by self time, formatted
};

// Runs a whole training. Config and data errors found before the first step throw (exit 2);
// a failure during training is recorded in summary.json and returned with status "failed".
TrainResult run_training(const config::Config& cfg, const TrainOptions& opts);

}  // namespace llmprof::train
