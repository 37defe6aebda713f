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
struct LatencyStats {
  int64_t n = 0;
  double mean_ms = 0, p50_ms = 0, p90_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
};
LatencyStats latency_stats(std::vector<double> times_ms);

struct BenchRow {
  config::BenchVariant variant = config::BenchVariant::kFp32;
  int64_t batch = 0;
  int64_t seq_len = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  LatencyStats latency;
  std::optional<double> loss, perplexity, accuracy;  // on the validation set
  int64_t weight_bytes = 0;
  // gpt generation with the KV cache (batch rows generate together); null for the encoder
  std::optional<double> ttft_ms;             // prefill of the prompt + first token
  std::optional<double> per_token_p50_ms;    // one decode step
  std::optional<double> generate_tokens_per_s;  // batch x new tokens / decode time
};

struct BenchResult {
  std::string run_dir;
  std::vector<BenchRow> rows;
  bool reports_accuracy = false;  // classify: accuracy is the quality figure, else perplexity
  bool generation = false;        // rows carry KV-cache generation figures (gpt, P > 0)
};

// Throws ConfigError/DataError for bad input (exit 2).
BenchResult run_bench(const config::Config& cfg, const BenchOptions& opts);

}  // namespace llmprof::eval
