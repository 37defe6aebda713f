// llmprof bench: for each variant (fp32, bf16 autocast, int8 dynamic quantization) the quality on
// the eval sets, then for each batch size the forward latency over 8 distinct validation batches and, for the
// decoder, KV-cache generation latency. The timed loops live in bench_measure.cpp.
#include "llmprof/eval/bench.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/version.h>

#include <cmath>
#include <optional>

#include "bench_measure.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/device.h"
#include "llmprof/error.h"
#include "llmprof/gpu/event_pool.h"
#include "llmprof/model/linear.h"
#include "llmprof/model/quantize.h"
#include "llmprof/output/csv.h"
#include "llmprof/output/log.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/train/env.h"
#include "prepare.h"

namespace llmprof::eval {

namespace {

using config::BenchVariant;


// bench.csv: the first 14 columns are the stable contract; later ones are extras.
const std::vector<std::string> kBenchColumns = {
    "variant", "batch", "seq_len", "samples_per_s", "tokens_per_s", "p50_ms", "p90_ms", "p95_ms",
    "p99_ms", "max_ms", "loss", "perplexity", "accuracy", "weight_bytes",
    // extras
    "mean_ms", "iters", "ttft_ms", "per_token_p50_ms", "generate_tokens_per_s"};

const std::vector<std::string> kQualityColumns = {"variant",       "dataset",      "source",
                                                  "loss",          "perplexity",   "accuracy",
                                                  "samples_per_s", "tokens_per_s", "seconds",
                                                  "weights"};

std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// The prompt length P for decoder generation, 0 when none is measured. Checked before anything
// is loaded or written: P + generate_tokens must fit in the model's context.
int64_t prompt_length(const config::Config& cfg) {
  if (cfg.model.type == config::ModelType::kDistilbert || cfg.bench.generate_tokens == 0) return 0;
  const int64_t T = cfg.model.block_size, n = cfg.bench.generate_tokens;
  const int64_t P = cfg.bench.prompt_tokens > 0 ? cfg.bench.prompt_tokens : T / 2;
  if (P < 1 || P + n > T) {
    throw ConfigError(
        fmt::format("bench.generate_tokens: a prompt of {} tokens{} + {} generated tokens = {} "
                    "does not fit in model.block_size {}; lower bench.generate_tokens or "
                    "bench.prompt_tokens (or set bench.generate_tokens=0)",
                    P, cfg.bench.prompt_tokens > 0 ? "" : " (block_size / 2)", n, P + n, T),
        cfg.source_file, "bench.generate_tokens");
  }
  return P;
}

// Puts the model in a variant's state for a scope: int8 quantizes every model::Linear (the fp32
// weights stay beside the packed ones) and drops the packed weights again on exit.
class VariantScope {
 public:
  VariantScope(const config::Config& cfg, torch::nn::Module& module, BenchVariant variant)
      : module_(module), int8_(variant == BenchVariant::kInt8) {
    const int64_t fp32_bytes = model::parameter_bytes(module);
    weight_bytes_ = fp32_bytes;
    if (!int8_) return;
    try {
      stats_ = model::quantize_dynamic_int8(module, cfg.bench.quant_engine);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("bench.quant_engine: {}", e.what()), cfg.source_file,
                        "bench.quant_engine");
    }
    // Stored bytes: the fp32 Linear weights and biases are replaced by stats_.weight_bytes.
    int64_t linear_bytes = 0;
    for (const auto& m : module.modules(/*include_self=*/true)) {
      if (const auto* lin = m->as<model::LinearImpl>()) {
        for (const torch::Tensor& t : {lin->weight, lin->bias}) {
          if (t.defined()) linear_bytes += t.numel() * static_cast<int64_t>(t.element_size());
        }
      }
    }
    weight_bytes_ = fp32_bytes - linear_bytes + stats_.weight_bytes;
  }
  ~VariantScope() {
    if (int8_) model::dequantize(module_);
  }
  VariantScope(const VariantScope&) = delete;
  VariantScope& operator=(const VariantScope&) = delete;

  int64_t weight_bytes() const { return weight_bytes_; }
  const model::QuantizeStats& stats() const { return stats_; }

 private:
  torch::nn::Module& module_;
  bool int8_;
  int64_t weight_bytes_ = 0;
  model::QuantizeStats stats_;
};

// log.txt in the result directory for the length of the bench, removed on any exit.
class LogFileScope {
 public:
  explicit LogFileScope(const std::string& path) { output::add_log_file(path); }
  ~LogFileScope() { output::remove_log_file(); }
  LogFileScope(const LogFileScope&) = delete;
  LogFileScope& operator=(const LogFileScope&) = delete;
};

using rundir::QualityRow;

// The variant's autocast on the bench's device: bf16/fp16 autocast, fp32 and int8 none.
device::Autocast autocast_of(BenchVariant variant, const config::Device& device) {
  return device::Autocast(device, variant == BenchVariant::kBf16   ? config::Precision::kBf16
                                  : variant == BenchVariant::kFp16 ? config::Precision::kFp16
                                                                   : config::Precision::kFp32);
}

QualityRow measure_quality(train::Task& task,
                           const train::EvalSet& set,
                           BenchVariant variant,
                           device::DeviceContext& device,
                           const config::Device& where) {
  double seconds = 0;
  const device::Autocast autocast = autocast_of(variant, where);
  const train::EvalSums sums = evaluate_set(task, set, autocast, device, &seconds);
  QualityRow q;
  q.variant = variant;
  q.dataset = set.name;
  q.source = set.source;
  q.loss = finite(sums.mean_loss());
  if (q.loss && !task.reports_accuracy()) q.perplexity = finite(std::exp(*q.loss));
  if (task.reports_accuracy()) q.accuracy = finite(sums.accuracy());
  q.seconds = seconds;
  if (seconds > 0) {
    q.samples_per_s = static_cast<double>(sums.rows) / seconds;
    q.tokens_per_s = static_cast<double>(sums.tokens) / seconds;
  }
  return q;
}

void write_quality(output::CsvWriter& csv, const QualityRow& q) {
  csv.add(config::name(q.variant)).add(std::string_view(q.dataset));
  csv.add(std::string_view(q.source)).add(q.loss).add(q.perplexity).add(q.accuracy);
  csv.add(q.samples_per_s).add(q.tokens_per_s).add(q.seconds).add(std::string_view(q.weights));
  csv.end_row();
}

void write_row(output::CsvWriter& csv, const BenchRow& r) {
  const LatencyStats& l = r.latency;
  csv.add(config::name(r.variant)).add(r.batch).add(r.seq_len);
  csv.add(r.samples_per_s).add(r.tokens_per_s);
  csv.add(l.p50_ms).add(l.p90_ms).add(l.p95_ms).add(l.p99_ms).add(l.max_ms);
  csv.add(r.loss).add(r.perplexity).add(r.accuracy).add(r.weight_bytes);
  csv.add(l.mean_ms).add(l.n).add(r.ttft_ms).add(r.per_token_p50_ms).add(r.generate_tokens_per_s);
  csv.end_row();
}

std::string fmt_opt(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
}

std::map<std::string, std::string> notes(const config::Config& cfg, bool generation,
                                         int64_t prompt_tokens) {
  std::map<std::string, std::string> n = {
      {"fp32", "the model as stored, float32 weights and activations"},
      {"bf16",
       "autocast to bfloat16 around each forward (torch.autocast(device, torch.bfloat16)): "
       "linears and matmuls run in bf16, their fp32 weights are cast per forward (the cast cache "
       "is cleared after each call); weights stay fp32, so weight_bytes is the fp32 size"},
      {"fp16", "as bf16 with float16 (CUDA only)"},
      {"int8",
       fmt::format("dynamic quantization (torch.ao.quantization.quantize_dynamic's scheme) on the "
                   "'{}' engine: every Linear's weight per-tensor symmetric int8 (scale = max|w| / "
                   "127), activations quantized per call from their observed range, int32 "
                   "accumulation, fp32 output; embeddings, LayerNorms, the attention matmuls and "
                   "the tied output projection stay fp32. weight_bytes = fp32 parameters and "
                   "buffers with each Linear's weight and bias replaced by int8 weights + fp32 "
                   "scale + int32 zero point + fp32 bias",
                   config::name(cfg.bench.quant_engine))},
      {"latency",
       fmt::format("time of each forward (task logits of one fixed validation batch), {}, {} "
                   "untimed warm-up calls then {} timed; percentiles interpolate linearly between "
                   "order statistics (numpy's default); samples_per_s = batch / mean, "
                   "tokens_per_s = batch * seq_len / mean",
                   device::capabilities(cfg.device).timing_events
                       ? "between two CUDA events on the default stream, the host waiting for the "
                         "second before the next call (calls do not overlap; launch gaps count)"
                       : "on the steady clock (CPU execution is synchronous: no device sync)",
                   cfg.bench.warmup_iters, cfg.bench.iters)},
      {"quality",
       "loss is the mean cross-entropy per scored target on the validation set (bench_quality.csv "
       "adds every eval.paths set); perplexity = exp(loss); accuracy for classify only"}};
  if (generation) {
    n["generation"] = fmt::format(
        "greedy decoding with the KV cache, batch rows together: a prompt of {} tokens (the first "
        "of each row of the batch), then {} new tokens; {} generations timed after {} warm-up. "
        "ttft_ms = median of prefill (one forward of the prompt) + argmax; per_token_p50_ms = "
        "median decode step (one token's forward + argmax); generate_tokens_per_s = batch x "
        "(new tokens - 1) x generations / total decode time",
        prompt_tokens, cfg.bench.generate_tokens, cfg.bench.iters,
        cfg.bench.warmup_iters > 0 ? 1 : 0);
  }
  return n;
}

// The generation's sizes and its KV cache per token (the cache holds the weights' dtype, fp32
// here) against a multi-head model of the same width: grouped-query attention's saving.
rundir::GenerationFigures generation_figures(const model::Decoder& d, int64_t prompt_tokens,
                                             int64_t generate_tokens) {
  const int64_t kv = d.kv_bytes_per_token(4), mha = d.mha_kv_bytes_per_token(4);
  return {prompt_tokens, generate_tokens, kv, mha,
          fmt::format("fp32 cache: {} bytes per token ({} for one kv head per query head, {:.2f}x)",
                      kv, mha, kv > 0 ? static_cast<double>(mha) / static_cast<double>(kv) : 0.0)};
}

// Everything the timed loops need, made before the result directory exists.
struct BenchSetup {
  // Prepared in place: its samplers keep pointers into its data.
  BenchSetup(const config::Config& given, const BenchOptions& opts)
      : p(prepare(given, opts.checkpoint, opts.allow_init_weights)) {}
  Prepared p;                             // p.cfg: the given config with the checkpoint's shape
  std::vector<BenchVariant> variants;
  std::vector<int64_t> batch_sizes;
  int64_t prompt_tokens = 0;              // P of the decoder generation; 0: none measured
  bool generation = false;
  int64_t quality_batch = 0;
  std::vector<train::EvalSet> sets;       // sets[0] is the validation split
  std::vector<std::vector<train::Batch>> inputs;  // per batch size, on the device
  std::unique_ptr<gpu::EventApi> events;  // CUDA only
};

// Per batch size the first kTimedBatches validation batches, each (b, T), cycled by the timed
// loop: fresh activations every call, as in real inference.
std::vector<std::vector<train::Batch>> timed_inputs(const Prepared& p,
                                                    const std::vector<int64_t>& batch_sizes) {
  const config::Config& cfg = p.cfg;
  constexpr int64_t kTimedBatches = 8;
  std::vector<std::vector<train::Batch>> inputs;
  for (int64_t b : batch_sizes) {
    train::EvalSet some = train::make_validation_eval_set(cfg, p.data, b, kTimedBatches);
    if (some.batches.empty()) {
      throw DataError(
          fmt::format("llmprof bench: the validation set ({}) holds no batch", some.source));
    }
    for (train::Batch& batch : some.batches) batch = train::copy_to_device(*p.device, batch);
    inputs.push_back(std::move(some.batches));
  }
  return inputs;
}

// The rest of s from s.p.
void set_up(BenchSetup& s) {
  const config::Config& cfg = s.p.cfg;  // with the checkpoint's model shape
  s.variants = config::bench_variants(cfg);
  s.batch_sizes = config::bench_batch_sizes(cfg);
  s.prompt_tokens = prompt_length(cfg);
  s.generation = s.p.task->decoder() != nullptr && s.prompt_tokens > 0;
  s.quality_batch = cfg.eval.batch_size > 0 ? cfg.eval.batch_size : s.batch_sizes.front();
  s.sets = eval_sets(s.p, s.quality_batch);
  s.inputs = timed_inputs(s.p, s.batch_sizes);
  // CUDA: each call timed by two events on LibTorch's default stream (the legacy one).
  s.events = s.p.device->event_api();
}

// The quality of one variant on every eval set, written to bench_quality.csv and kept in quality;
// returns the validation split's row, which every latency row of the variant carries.
std::optional<QualityRow> measure_variant_quality(BenchSetup& s,
                                                  BenchVariant variant,
                                                  output::CsvWriter& quality_csv,
                                                  std::vector<QualityRow>& quality) {
  const config::Config& cfg = s.p.cfg;
  train::Task& task = *s.p.task;
  std::optional<QualityRow> val;
  for (const train::EvalSet& set : s.sets) {
    QualityRow q = measure_quality(task, set, variant, *s.p.device, cfg.device);
    q.weights = weights_label(s.p);
    write_quality(quality_csv, q);
    quality.push_back(q);
    if (!val) val = q;  // sets[0] is the validation split
    spdlog::info("{} on {}: loss {}, {}", config::name(variant), q.dataset,
                 fmt_opt(q.loss, "{:.4f}"),
                 task.reports_accuracy() ? "accuracy " + fmt_opt(q.accuracy, "{:.4f}")
                                         : "perplexity " + fmt_opt(q.perplexity, "{:.3f}"));
  }
  return val;
}

// KV-cache generation from the first P tokens of each row of input: ttft, decode step, rate.
void measure_generation(const BenchSetup& s,
                        const train::Batch& input,
                        const device::Autocast& autocast,
                        BenchRow& row) {
  const config::Config& cfg = s.p.cfg;
  // The prompt: the first P tokens of each row of the input batch, (b, P).
  const torch::Tensor prompt = input.x.slice(1, 0, s.prompt_tokens).contiguous();
  const GenerateTimes g =
      time_generate(*s.p.task->decoder(), prompt, cfg.bench.generate_tokens, autocast,
                    s.events.get(), cfg.bench.warmup_iters > 0 ? 1 : 0, cfg.bench.iters);
  row.ttft_ms = latency_stats(g.ttft_ms).p50_ms;
  if (g.step_ms.empty()) return;
  row.per_token_p50_ms = latency_stats(g.step_ms).p50_ms;
  double decode_ms = 0;
  for (double ms : g.step_ms) decode_ms += ms;
  // Each decode step yields one token per row of the batch.
  if (decode_ms > 0) {
    row.generate_tokens_per_s = static_cast<double>(row.batch) *
                                static_cast<double>(g.step_ms.size()) / (decode_ms * 1e-3);
  }
}

// The latency row of one variant at batch size s.batch_sizes[i].
BenchRow measure_row(const BenchSetup& s,
                     BenchVariant variant,
                     size_t i,
                     int64_t weight_bytes,
                     const std::optional<QualityRow>& val) {
  const config::Config& cfg = s.p.cfg;
  const device::Autocast autocast = autocast_of(variant, cfg.device);
  const std::vector<train::Batch>& input_batches = s.inputs[i];
  const train::Batch& input = input_batches.front();
  BenchRow row;
  row.variant = variant;
  row.batch = s.batch_sizes[i];
  row.seq_len = input.x.size(1);
  row.latency = latency_stats(time_forward(*s.p.task, input_batches, autocast, s.events.get(),
                                           cfg.bench.warmup_iters, cfg.bench.iters));
  const double mean_s = row.latency.mean_ms * 1e-3;
  row.samples_per_s = static_cast<double>(row.batch) / mean_s;
  row.tokens_per_s = static_cast<double>(row.batch * row.seq_len) / mean_s;
  if (val) {
    row.loss = val->loss;
    row.perplexity = val->perplexity;
    row.accuracy = val->accuracy;
  }
  row.weight_bytes = weight_bytes;
  if (s.generation) measure_generation(s, input, autocast, row);
  return row;
}

// bench.json: the setting, the context block, every latency row and every quality row.
rundir::BenchDoc bench_doc(const BenchSetup& s,
                           const BenchOptions& opts,
                           const BenchResult& result,
                           std::vector<QualityRow> quality) {
  const config::Config& cfg = s.p.cfg;
  const Prepared& p = s.p;
  train::Task& task = *p.task;
  train::TrainOptions env_opts;
  env_opts.command_line = opts.command_line;
  rundir::BenchDoc d;
  d.context = train::collect_env(cfg, p.runtime, device::PeakFlops{},
                                 device::PeakBytes{0, 0, "none", "not used by bench"}, env_opts);
  d.context.peak_flops.reset();  // bench measures no matmul peak
  d.task = task.name();
  d.model = task.describe();
  d.parameters = task.num_parameters();
  if (p.checkpoint) d.checkpoint = p.checkpoint->path;
  d.tokenizer = doc_tokenizer(*p.data.tokenizer);
  d.checkpoint_note = p.checkpoint
                          ? fmt::format("{} task, step {}", p.checkpoint->task, p.checkpoint->step)
                          : "no --checkpoint and no model.init_from: untrained "
                            "initial weights (quality figures are a baseline)";
  d.weights = weights_label(p);
  d.init_tensors = init_tensors(p);
  d.model_from_checkpoint = p.notes;
  d.threads = p.runtime.threads;
  d.quant_engine = config::name(cfg.bench.quant_engine);
  d.torch_version = TORCH_VERSION;
  d.variants = s.variants;
  d.batch_sizes = s.batch_sizes;
  d.warmup_iters = cfg.bench.warmup_iters;
  d.iters = cfg.bench.iters;
  d.quality_batch_size = s.quality_batch;
  if (s.generation) {
    d.generation = generation_figures(*task.decoder(), s.prompt_tokens, cfg.bench.generate_tokens);
  } else {
    d.generation_note = task.decoder() == nullptr
                            ? "encoder task: no autoregressive generation"
                            : "bench.generate_tokens=0: generation not measured";
  }
  d.notes = notes(cfg, s.generation, s.prompt_tokens);
  d.rows = result.rows;
  d.quality = std::move(quality);
  return d;
}

}  // namespace

BenchResult run_bench(const config::Config& given, const BenchOptions& opts) {
  config::validate(given);
  const device::Capabilities can = device::capabilities(given.device);
  for (const BenchVariant v : config::bench_variants(given)) {
    if (v == BenchVariant::kInt8 && !can.int8_dynamic_quant) {
      throw ConfigError("bench.variants: int8 (dynamic quantization of the Linears) runs on the "
                        "CPU only; on device=cuda use fp32, bf16 and fp16",
                        given.source_file, "bench.variants");
    }
    if (v == BenchVariant::kFp16 && !can.fp16) {
      throw ConfigError("bench.variants: fp16 needs device=cuda (CPU matmuls have no fp16 path); "
                        "on the CPU use fp32, bf16 and int8",
                        given.source_file, "bench.variants");
    }
  }
  // -- set-up: data, model, eval sets and inputs (before the result directory exists) ---------
  BenchSetup s(given, opts);
  set_up(s);
  const config::Config& cfg = s.p.cfg;  // with the checkpoint's model shape
  train::Task& task = *s.p.task;

  // -- result directory ----------------------------------------------------------------------
  BenchResult result;
  result.reports_accuracy = task.reports_accuracy();
  result.generation = s.generation;
  const std::string parent = opts.output_dir.empty() ? cfg.output.dir : opts.output_dir;
  result.run_dir = output::create_run_dir(parent, cfg.output.name, opts.run_label);
  const std::string& dir = result.run_dir;
  LogFileScope log_file(rundir::path(dir, rundir::kLog));
  output::write_file_atomic(rundir::path(dir, rundir::kConfig), config::to_yaml(cfg));
  output::CsvWriter bench_csv(rundir::path(dir, rundir::kBench), kBenchColumns);
  output::CsvWriter quality_csv(rundir::path(dir, rundir::kBenchQuality), kQualityColumns);
  spdlog::info("bench directory {}", dir);
  for (const std::string& note : cfg.notes) spdlog::warn("config: {}", note);
  for (const std::string& note : s.p.notes) spdlog::info("model: {}", note);
  spdlog::info("model: {}, {} parameters; task {}; {} threads; variants {}; batch sizes {}",
               task.describe(), task.num_parameters(), task.name(), s.p.runtime.threads,
               cfg.bench.variants, cfg.bench.batch_sizes);

  std::vector<QualityRow> quality;
  for (const BenchVariant variant : s.variants) {
    VariantScope scope(cfg, task.module(), variant);
    if (variant == BenchVariant::kInt8) {
      spdlog::info("int8: {} Linear layers quantized on {}", scope.stats().linears,
                   config::name(scope.stats().engine));
    }
    // Quality first: every row of this variant carries the validation set's figures.
    const std::optional<QualityRow> val =
        measure_variant_quality(s, variant, quality_csv, quality);
    for (size_t i = 0; i < s.batch_sizes.size(); ++i) {
      BenchRow row = measure_row(s, variant, i, scope.weight_bytes(), val);
      write_row(bench_csv, row);
      spdlog::info("{} batch {}: {:.1f} samples/s, p50 {:.3f} ms, p99 {:.3f} ms{}",
                   config::name(variant), row.batch, row.samples_per_s, row.latency.p50_ms,
                   row.latency.p99_ms,
                   row.ttft_ms ? fmt::format(", ttft {:.3f} ms, {} ms/token", *row.ttft_ms,
                                             fmt_opt(row.per_token_p50_ms, "{:.3f}"))
                               : "");
      result.rows.push_back(std::move(row));
    }
  }

  // -- bench.json ----------------------------------------------------------------------------
  rundir::write_bench_doc(rundir::path(dir, rundir::kBenchJson),
                          bench_doc(s, opts, result, std::move(quality)));
  return result;
}

}  // namespace llmprof::eval
