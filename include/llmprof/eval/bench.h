// llmprof bench: forward-only inference speed of model variants (fp32, bf16 autocast, int8 dynamic
// quantization) per batch size, with the quality of each variant on the same eval data beside
// it, and for the decoder KV-cache generation latency. Writes <output.dir>/<name>/bench.csv,
// bench_quality.csv and bench.json; returns the rows (the CLI prints the table). Torch-free
// header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/rundir/bench_doc.h"

namespace llmprof::config {
struct Config;
}

namespace llmprof::eval {

struct BenchOptions {
  std::string checkpoint;        // checkpoint or run directory; empty = model.init_from
  std::string output_dir;        // parent of the result directory; empty = output.dir
  std::string run_label = "bench";
  bool allow_init_weights = false;  // bench a checkpoint that lacks tensors (marked so)
  std::vector<std::string> command_line;
};

// Latency percentiles of a list of per-iteration times in ms (linear interpolation between order
// statistics, numpy's default). Empty input gives all zeros with n = 0.
using LatencyStats = rundir::LatencyStats;
LatencyStats latency_stats(std::vector<double> times_ms);

// One variant at one batch size: bench.json's row (rundir writes it).
using BenchRow = rundir::BenchRow;

struct BenchResult {
  std::string run_dir;
  std::vector<BenchRow> rows;
  bool reports_accuracy = false;  // classify: accuracy is the quality figure, else perplexity
  bool generation = false;        // rows carry KV-cache generation figures (gpt, P > 0)
};

// Throws ConfigError/DataError for bad input (exit 2).
BenchResult run_bench(const config::Config& cfg, const BenchOptions& opts);

}  // namespace llmprof::eval
