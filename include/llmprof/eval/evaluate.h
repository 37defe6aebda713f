// llmprof eval: loss and perplexity (or accuracy) of a model, trained or loaded from a checkpoint,
// on its validation split and on every eval.paths dataset, with throughput. Writes
// <output.dir>/<name>/eval_sets.csv and eval.json. Torch-free header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/rundir/eval_doc.h"

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

// One evaluated set: eval.json's figures (rundir writes them).
using EvalSetResult = rundir::EvalSetFigures;

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
