// llmprof eval: loss and perplexity (or accuracy) of a model, trained or loaded from a checkpoint,
// on its validation split and on every eval.paths dataset, with throughput. Writes
// <output.dir>/<name>/eval_sets.csv and eval.json. Torch-free header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::config {
struct Config;
}

namespace llmprof::eval {

struct EvalOptions {
  std::string checkpoint;        // checkpoint or run directory; empty = model.init_from
  std::string output_dir;        // parent of the result directory; empty = output.dir
  std::string run_label = "eval";
  std::vector<std::string> command_line;
};

struct EvalSetResult {
  std::string name;              // val | name from eval.paths
  std::string source;            // file
  int64_t batches = 0;
  int64_t sequences = 0;         // real sequences evaluated
  int64_t targets = 0;           // tokens (lm, mlm) or sequences (classify) scored
  double loss = 0;               // mean cross-entropy per target, nats
  double perplexity = 0;         // exp(loss)
  std::optional<double> accuracy;  // classify
  double seconds = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;       // input positions (sequences x T) per second
};

struct EvalResult {
  std::string run_dir;
  std::string task;
  std::string checkpoint;        // the checkpoint read; empty = untrained (init) weights
  std::vector<EvalSetResult> sets;
};

// Throws ConfigError/DataError for bad input (exit 2).
EvalResult run_eval(const config::Config& cfg, const EvalOptions& opts);

}  // namespace llmprof::eval
