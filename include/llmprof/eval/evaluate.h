// llmprof eval: loss and perplexity (or accuracy) of a model, trained or loaded from a checkpoint,
// on its validation split and on every eval.paths dataset, with throughput. Writes
// <output.dir>/<name>/eval_sets.csv and eval.json. Torch-free header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::config {
struct Config;
}

namespace llmprof::eval {

struct EvalOptions {
  std::string checkpoint;        // checkpoint or run directory; empty = model.init_from
  std::string output_dir;        // parent of the result directory; empty = output.dir
  std::string run_label = "eval";
  bool allow_init_weights = false;  // evaluate a checkpoint that lacks tensors (marked so)
  std::vector<std::string> command_line;
};

struct EvalSetResult {
  std::string name;              // val | name from eval.paths
  std::string source;            // file
  std::string sampling;          // how a limited set was drawn; empty = whole set, in order
  int64_t available_sequences = 0;  // sequences (lm: windows) in the whole set
  int64_t batches = 0;
  int64_t sequences = 0;         // real sequences evaluated
  int64_t targets = 0;           // tokens (lm, mlm) or sequences (classify) scored
  double loss = 0;               // mean cross-entropy per target, nats
  std::optional<double> perplexity;  // exp(loss); lm and mlm only
  std::optional<double> accuracy;  // classify
  double seconds = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;       // input positions (sequences x T) per second
};

struct EvalResult {
  std::string run_dir;
  config::TaskKind task = config::TaskKind::kLm;
  std::string checkpoint;        // the checkpoint read; empty = untrained (init) weights
  std::string weights;           // checkpoint | partly initial (N tensors at init) | initial
  std::vector<std::string> init_tensors;  // tensors the checkpoint lacked (left at init)
  bool reports_perplexity = true;  // false for classify
  std::vector<EvalSetResult> sets;
};

// Throws ConfigError/DataError for bad input (exit 2).
EvalResult run_eval(const config::Config& cfg, const EvalOptions& opts);

}  // namespace llmprof::eval
