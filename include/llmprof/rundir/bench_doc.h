// bench.json (llmprof bench) as one typed document: the setting, the context block (env.json's
// fields), every latency row and every quality row. bench measures the figures, rundir writes
// and reads them. Schema kBenchSchemaVersion (rundir/files.h); fields in docs/bench.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/rundir/env.h"
#include "llmprof/rundir/eval_doc.h"

namespace llmprof::rundir {

struct LatencyStats {
  int64_t n = 0;
  double mean_ms = 0, p50_ms = 0, p90_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
};

// One variant at one batch size (one row of bench.csv).
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

// One variant on one eval set (one row of bench_quality.csv).
struct QualityRow {
  config::BenchVariant variant = config::BenchVariant::kFp32;
  std::string dataset, source;
  std::optional<double> loss, perplexity, accuracy, samples_per_s, tokens_per_s;
  double seconds = 0;
  std::string weights;  // checkpoint | partly initial (...) | initial
};

// The decoder's generation setting and its KV cache per token.
struct GenerationFigures {
  int64_t prompt_tokens = 0, generate_tokens = 0;
  int64_t kv_cache_bytes_per_token = 0, mha_kv_cache_bytes_per_token = 0;
  std::string kv_cache_note;
};

struct BenchDoc {
  int schema_version = 0;  // as read; the writer writes kBenchSchemaVersion
  std::string task, model;  // Task::name(), Task::describe()
  int64_t parameters = 0;
  std::optional<std::string> checkpoint;  // null: untrained (initial) weights
  std::string checkpoint_note, weights;
  std::vector<std::string> init_tensors, model_from_checkpoint;
  DocTokenizer tokenizer;
  int64_t threads = 0;
  std::string quant_engine, torch_version;
  std::vector<config::BenchVariant> variants;
  std::vector<int64_t> batch_sizes;
  int64_t warmup_iters = 0, iters = 0, quality_batch_size = 0;
  std::optional<GenerationFigures> generation;  // null: no generation measured
  std::optional<std::string> generation_note;   // why not; null when measured
  std::map<std::string, std::string> notes;      // variant or figure -> how it is measured
  Env context;  // env.json's fields but schema_version and peak_flops
  std::vector<BenchRow> rows;
  std::vector<QualityRow> quality;

  // Read back, not written: fields this version does not know (JSON pointer -> JSON text).
  std::map<std::string, std::string> unknown;
};

// The document's text: keys in a fixed (sorted) order, two-space indent, a final newline.
std::string bench_doc_text(const BenchDoc& d);
// Writes path (temp + rename).
void write_bench_doc(const std::string& path, const BenchDoc& d);
// Parses a bench.json text; errors name `file`: invalid JSON, a missing schema_version or rows,
// a field of the wrong type, a newer schema_version, an unknown variant.
BenchDoc parse_bench_doc(const std::string& text, const std::string& file);
// docs/bench.md: every field, its type and when it is written, from the writer.
std::string bench_doc_fields_doc();

}  // namespace llmprof::rundir
