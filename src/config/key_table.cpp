// The key schema: one row per Config field, in config.h order. Defaults are not repeated here;
// they are read from a default-constructed Config, so the struct stays the single source.
#include <fmt/format.h>

#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "key_spec.h"
#include "llmprof/config/enums.h"

namespace llmprof::config {
// As `llmprof config keys` prints a key's type.
LLMPROF_ENUM_NAMES(detail::KeyType, "type", "int", "float", "bool", "string", "enum");
}  // namespace llmprof::config

namespace llmprof::config::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A reference to cfg.<group>.<field>, as a plain function pointer.
template <auto Group, auto Field>
auto& member(Config& cfg) {
  return (cfg.*Group).*Field;
}

// A reference to a top-level cfg.<field>.
template <auto Field>
auto& top_member(Config& cfg) {
  return cfg.*Field;
}

// The accessor and dotted path of cfg.group.field, kept in step by construction.
#define LLMPROF_KEY(group, field) \
#group "." #field, &member < &Config::group, &decltype(Config::group)::field>
#define LLMPROF_TOP_KEY(field) #field, &top_member < &Config::field>
// The accessor alone, for enum keys: their path is the one in the enum's name table.
#define LLMPROF_REF(group, field) &member<&Config::group, &decltype(Config::group)::field>
#define LLMPROF_TOP_REF(field) &top_member<&Config::field>

// The enum behind Ref (an accessor E& (*)(Config&)) read and written as its table index.
template <auto Ref>
using EnumOf = std::remove_reference_t<decltype(Ref(std::declval<Config&>()))>;
template <auto Ref>
int enum_get(const Config& cfg) {
  return static_cast<int>(Ref(const_cast<Config&>(cfg)));  // Ref only reads here
}
template <auto Ref>
void enum_set(Config& cfg, int index) {
  Ref(cfg) = static_cast<EnumOf<Ref>>(index);
}

// A float interval; open ends are excluded.
struct Interval {
  double min;
  double max;
  bool min_open = false;
  bool max_open = false;
};

// Interval constructors named by their brackets.
Interval closed(double lo, double hi) { return {lo, hi, false, false}; }
Interval closed_open(double lo, double hi) { return {lo, hi, false, true}; }
Interval open_closed(double lo, double hi) { return {lo, hi, true, false}; }
Interval open(double lo, double hi) { return {lo, hi, true, true}; }
Interval at_least(double lo) { return {lo, kInf, false, true}; }

// An integer key with inclusive bounds.
KeySpec int_key(const char* path, IntRef ref, int64_t lo, int64_t hi, const char* doc) {
  KeySpec s;
  s.path = path;
  s.type = KeyType::kInt;
  s.doc = doc;
  s.int_min = lo;
  s.int_max = hi;
  s.int_ref = ref;
  return s;
}

// A float key within an interval.
KeySpec float_key(const char* path, FloatRef ref, Interval range, const char* doc) {
  KeySpec s;
  s.path = path;
  s.type = KeyType::kFloat;
  s.doc = doc;
  s.float_min = range.min;
  s.float_max = range.max;
  s.min_open = range.min_open;
  s.max_open = range.max_open;
  s.float_ref = ref;
  return s;
}

// A true/false key.
KeySpec bool_key(const char* path, BoolRef ref, const char* doc) {
  KeySpec s;
  s.path = path;
  s.type = KeyType::kBool;
  s.doc = doc;
  s.bool_ref = ref;
  return s;
}

// A free-form string key (paths, names).
KeySpec string_key(const char* path, StringRef ref, const char* doc) {
  KeySpec s;
  s.path = path;
  s.type = KeyType::kString;
  s.doc = doc;
  s.string_ref = ref;
  return s;
}

// An enum key: path and choices come from the enum's one name table (config/enums.h).
template <auto Ref>
KeySpec enum_key(const char* doc) {
  using Table = EnumTable<EnumOf<Ref>>;
  KeySpec s;
  s.path = std::string(Table::key);
  s.type = KeyType::kEnum;
  s.doc = doc;
  s.choices.assign(Table::names.begin(), Table::names.end());
  s.enum_get = &enum_get<Ref>;
  s.enum_set = &enum_set<Ref>;
  return s;
}

// Builds the table once; see config.h for why each default is what it is.
std::vector<KeySpec> build_table() {
  return {
      // model
      enum_key<LLMPROF_REF(model, type)>(
          "gpt (nanoGPT decoder) | distilbert (DistilBERT-style encoder) | llama (RoPE, "
          "RMSNorm, SwiGLU, grouped-query attention: Llama, Qwen2, Mistral, SmolLM2)"),
      int_key(LLMPROF_KEY(model, n_layer), 1, 256, "transformer blocks"),
      int_key(LLMPROF_KEY(model, n_head), 1, 256, "attention heads; must divide model.n_embd"),
      int_key(LLMPROF_KEY(model, n_embd), 1, 65536, "residual stream width C"),
      int_key(LLMPROF_KEY(model, block_size), 1, 1 << 20, "context length T in tokens"),
      int_key(LLMPROF_KEY(model, vocab_size), 0, 1 << 24,
              "vocabulary size; 0 = from the tokenizer"),
      float_key(LLMPROF_KEY(model, dropout), closed_open(0, 1),
                "dropout probability; 0 for speed and determinism"),
      bool_key(LLMPROF_KEY(model, bias), "bias in Linear and LayerNorm layers, as GPT-2"),
      int_key(LLMPROF_KEY(model, ffn_dim), 0, 1 << 20,
              "distilbert FFN width; 0 = 4 * model.n_embd (gpt always uses 4 * n_embd)"),
      int_key(LLMPROF_KEY(model, max_positions), 0, 1 << 20,
              "position embeddings (>= block_size); 0 = model.block_size"),
      enum_key<LLMPROF_REF(model, activation)>(
          "gpt MLP GELU: gelu (exact, nanoGPT) | gelu_tanh (GPT-2's gelu_new)"),
      enum_key<LLMPROF_REF(model, attention)>(
          "gpt attention core: manual (each op and scope visible) | sdpa (fused "
          "scaled_dot_product_attention: flash attention on CUDA, as nanoGPT)"),
      bool_key(LLMPROF_KEY(model, fused_loss),
               "cuda: the cross-entropy over the logits as llmprof's two kernels (a one-pass "
               "log-sum-exp forward; a backward writing softmax minus one-hot straight in the "
               "logits' dtype) instead of LibTorch's fp32 cast, log_softmax and nll_loss, which "
               "write the logits three times over in fp32; false: LibTorch's ops, as nanoGPT"),
      bool_key(LLMPROF_KEY(model, fused_norm),
               "each residual add and the LayerNorm (gpt, distilbert) or RMSNorm (llama) after "
               "it as one op: on cuda llmprof's kernels (the sum and the norm written in one "
               "pass; a backward adding the residual's gradient in the same pass), elsewhere the "
               "same op in LibTorch ops; false: LibTorch's add and norm, as nanoGPT"),
      int_key(LLMPROF_KEY(model, num_labels), 2, 1 << 16, "classes for train.task=classify"),
      string_key(LLMPROF_KEY(model, init_from),
                 "weights to start from: an llmprof checkpoint or run directory, or a Hugging Face "
                 "GPT-2/DistilBERT folder (which also gives the model shape and tokenizer)"),
      // model: llama only (Llama, Qwen2, Mistral, SmolLM2 shapes)
      int_key(LLMPROF_KEY(model, n_kv_head), 0, 256,
              "llama: key/value heads of grouped-query attention; must divide model.n_head; "
              "0 = model.n_head (multi-head attention)"),
      int_key(LLMPROF_KEY(model, intermediate_size), 0, 1 << 20,
              "llama: SwiGLU width; 0 = 4 * model.n_embd"),
      float_key(LLMPROF_KEY(model, rope_theta), open(0, kInf), "llama: RoPE base theta"),
      float_key(LLMPROF_KEY(model, rms_norm_eps), open(0, 1), "llama: RMSNorm epsilon"),
      bool_key(LLMPROF_KEY(model, tie_embeddings),
               "llama: lm_head shares embed_tokens.weight (no lm_head.weight of its own)"),
      int_key(LLMPROF_KEY(model, head_dim), 0, 4096,
              "llama: per-head width; 0 = model.n_embd / model.n_head"),
      bool_key(LLMPROF_KEY(model, attention_bias), "llama: biases on q/k/v projections (Qwen2)"),
      bool_key(LLMPROF_KEY(model, fused_swiglu),
               "llama: the SwiGLU gate silu(gate) * up as one op: on cuda llmprof's kernels (one "
               "pass forward and backward, silu's output not kept), elsewhere the same op in "
               "LibTorch ops; false: LibTorch's silu and mul"),
      int_key(LLMPROF_KEY(model, sliding_window), 0, 1 << 24,
              "llama: Mistral's attention window, kept for export; 0 = none; a window smaller "
              "than model.block_size is refused (llmprof attends over the whole block)"),
      enum_key<LLMPROF_REF(model, rope_scaling_type)>(
          "llama: RoPE frequency scaling: none | llama3 (Llama 3.1's rope_scaling)"),
      float_key("model.rope_scaling.factor", LLMPROF_REF(model, rope_scaling_factor), at_least(1),
                "llama3 rope_scaling: factor"),
      float_key("model.rope_scaling.low_freq_factor",
                LLMPROF_REF(model, rope_scaling_low_freq_factor), open(0, kInf),
                "llama3 rope_scaling: low_freq_factor"),
      float_key("model.rope_scaling.high_freq_factor",
                LLMPROF_REF(model, rope_scaling_high_freq_factor), open(0, kInf),
                "llama3 rope_scaling: high_freq_factor (> low_freq_factor)"),
      int_key("model.rope_scaling.original_max_position_embeddings",
              LLMPROF_REF(model, rope_scaling_original_max_position_embeddings), 1, 1 << 24,
              "llama3 rope_scaling: the context length the model was pretrained with"),
      // data
      string_key(LLMPROF_KEY(data, path),
                 "training text file (.gz read directly); empty = the built-in generated corpus"),
      enum_key<LLMPROF_REF(data, tokenizer)>(
          "tokenizer: char (byte-level vocab of the corpus), gpt2 (BPE), wordpiece (BERT) or hf "
          "(a Hugging Face tokenizer.json, BPE: Llama, Qwen2, SmolLM2, Mistral)"),
      string_key(LLMPROF_KEY(data, vocab_path),
                 "gpt2 tokenizer: path of encoder.json; wordpiece: path of vocab.txt; hf: path of "
                 "tokenizer.json; char: a "
                 "run's saved vocab.json (empty: built from the corpus)"),
      string_key(LLMPROF_KEY(data, merges_path), "gpt2 tokenizer: path of vocab.bpe"),
      bool_key(LLMPROF_KEY(data, lower_case),
               "wordpiece: lower-case and strip accents (uncased vocabulary); false for cased"),
      float_key(LLMPROF_KEY(data, val_fraction), open(0, 1),
                "fraction of the token stream (its tail) held out for eval"),
      int_key(LLMPROF_KEY(data, num_workers), 0, 64,
              "background batch-producing threads; 0 = batches built in the step"),
      int_key(LLMPROF_KEY(data, prefetch), 1, 1024, "bounded batch queue depth, in batches"),
      int_key(LLMPROF_KEY(data, generated_chars), 1000, 1000000000,
              "characters in the generated corpus when data.path is empty"),
      enum_key<LLMPROF_REF(data, format)>(
          "encoder data format; auto = by extension (.jsonl, .csv, .tsv, else text; .gz ok)"),
      string_key(LLMPROF_KEY(data, val_path),
                 "encoder validation file; empty = the tail data.val_fraction of data.path"),
      string_key(
          LLMPROF_KEY(data, jsonl_fields),
          "jsonl: comma-separated string fields joined by newlines (gsm8k: question,answer)"),
      string_key(LLMPROF_KEY(data, text_column), "csv/tsv: header of the text column"),
      string_key(LLMPROF_KEY(data, label_column),
                 "csv/tsv: header of the integer label column (train.task=classify)"),
      int_key(LLMPROF_KEY(data, max_examples), 0, kNoIntMax,
              "records used from data.path, a seeded random subset; 0 = all"),
      int_key(LLMPROF_KEY(data, val_max_examples), 0, kNoIntMax,
              "records used from the validation data, a seeded random subset; 0 = all"),
      float_key(LLMPROF_KEY(data, mlm_probability), open(0, 1),
                "masked LM: fraction of tokens selected (80% [MASK], 10% random, 10% kept)"),
      // optim
      enum_key<LLMPROF_REF(optim, name)>("optimizer: sgd | adam | adamw"),
      float_key(LLMPROF_KEY(optim, lr), open_closed(0, 10), "peak learning rate, after warmup"),
      float_key(LLMPROF_KEY(optim, weight_decay), closed(0, 10),
                "weight decay: decoupled for adamw, L2 for adam and sgd"),
      float_key(LLMPROF_KEY(optim, beta1), closed_open(0, 1), "adam/adamw first-moment decay"),
      float_key(LLMPROF_KEY(optim, beta2), closed_open(0, 1), "adam/adamw second-moment decay"),
      float_key(LLMPROF_KEY(optim, eps), open_closed(0, 1), "adam/adamw denominator epsilon"),
      float_key(LLMPROF_KEY(optim, momentum), closed_open(0, 1), "sgd momentum; 0 = plain sgd"),
      float_key(LLMPROF_KEY(optim, grad_clip), closed(0, 1e6),
                "max global gradient norm; 0 = no clipping"),
      bool_key(LLMPROF_KEY(optim, fused),
               "adam/adamw as one fused multi-tensor kernel set per step (LibTorch's "
               "_fused_adam(w)_, >= 2.1 on CUDA, >= 2.4 on CPU); false: LibTorch's per-parameter "
               "loop"),
      // schedule
      int_key(LLMPROF_KEY(schedule, warmup_steps), 0, kNoIntMax,
              "optimizer steps of linear warmup from 0 to optim.lr"),
      bool_key(LLMPROF_KEY(schedule, cosine),
               "cosine decay from optim.lr to schedule.min_lr at max_steps; false = constant"),
      float_key(LLMPROF_KEY(schedule, min_lr), closed(0, 10),
                "learning rate at the end of the cosine decay"),
      int_key(LLMPROF_KEY(schedule, max_steps), 1, 1000000000, "optimizer steps in the run"),
      // train
      int_key(LLMPROF_KEY(train, batch_size), 1, 1 << 20, "sequences per micro-batch B"),
      int_key(LLMPROF_KEY(train, grad_accum_steps), 1, 1 << 16, "micro-batches per optimizer step"),
      int_key(LLMPROF_KEY(train, eval_interval), 0, kNoIntMax,
              "evaluate every N optimizer steps and at the last; 0 = never"),
      int_key(LLMPROF_KEY(train, eval_steps), 1, kNoIntMax, "batches per split per evaluation"),
      int_key(LLMPROF_KEY(train, seed), 0, kNoIntMax, "random seed for init, data and dropout"),
      enum_key<LLMPROF_REF(train, precision)>(
          "fp32, or bf16/fp16 autocast; fp16 needs device=cuda"),
      bool_key(LLMPROF_KEY(train, activation_checkpointing),
               "recompute each block's forward in backward to save memory"),
      enum_key<LLMPROF_REF(train, task)>(
          "lm (gpt next-token) | mlm (distilbert masked LM) | classify (distilbert)"),
      bool_key(LLMPROF_KEY(train, save_checkpoint),
               "write <run>/checkpoint (weights + config) at the end of the run"),
      int_key(LLMPROF_KEY(train, checkpoint_interval), 0, kNoIntMax,
              "with save_checkpoint: also every N steps (<run>/checkpoint-step<N>); 0 = end only"),
      bool_key(LLMPROF_KEY(train, cuda_graphs),
               "cuda: capture the step (forward, backward, clip, fused optimizer) as one CUDA "
               "graph after the profile warm-up and replay it with static input buffers"),
      bool_key(LLMPROF_KEY(train, cuda_expandable_segments),
               "cuda: the caching allocator maps one growing segment per pool "
               "(expandable_segments:True, LibTorch >= 2.1, added to PYTORCH_CUDA_ALLOC_CONF's "
               "settings) instead of one cudaMalloc per large request, so fragmentation leaves "
               "no unusable gaps"),
      string_key(LLMPROF_KEY(train, resume_from),
                 "a checkpoint folder (<run>/checkpoint-step<N>, <run>/checkpoint) to continue: "
                 "weights, optimizer, every rank's random state; the run starts at its step + 1"),
      float_key(LLMPROF_KEY(train, test_step_sleep_ms), closed(0, 60000),
                "TEST ONLY, not for use: ms slept in each micro-batch's forward phase (a known "
                "slowdown for measuring check --ab's catch rate); 0 = none"),
      // profile
      enum_key<LLMPROF_REF(profile, level)>(
          "off | phases | modules (+ per-module times) | ops (+ per-op times)"),
      float_key(LLMPROF_KEY(profile, peak_flops_per_s), at_least(0),
                "peak FLOP/s for MFU; 0 = measure with an sgemm calibration"),
      float_key(LLMPROF_KEY(profile, peak_bytes_per_s), at_least(0),
                "memory bandwidth (B/s) for the roofline; 0 = measure (STREAM triad) at level ops"),
      float_key(LLMPROF_KEY(profile, peak_busbw_bytes_per_s), at_least(0),
                "all-reduce bus bandwidth roof (B/s) that buckets are judged against, from "
                "`llmprof peak --comm`; 0 = none"),
      int_key(LLMPROF_KEY(profile, warmup_steps), 0, kNoIntMax,
              "first optimizer steps left out of summary statistics"),
      int_key(LLMPROF_KEY(profile, schedule_wait), 0, kNoIntMax,
              "modules/ops schedule: steps skipped before each recording cycle"),
      int_key(LLMPROF_KEY(profile, schedule_warmup), 0, kNoIntMax,
              "modules/ops schedule: steps traced but discarded before the active ones"),
      int_key(LLMPROF_KEY(profile, schedule_active), 1, kNoIntMax,
              "modules/ops schedule: steps recorded per cycle"),
      int_key(LLMPROF_KEY(profile, schedule_repeat), 0, kNoIntMax,
              "modules/ops schedule: recording cycles; 0 = until the run ends"),
      bool_key(LLMPROF_KEY(profile, record_shapes),
               "ops level: record the input shapes of every op (matmul shapes are always kept)"),
      bool_key(
          LLMPROF_KEY(profile, record_view_ops),
          "ops level: time view/metadata ops (select, view, as_strided, ...); else counted only"),
      int_key(LLMPROF_KEY(profile, shape_interval), 1, 1000000,
              "ops level: read op input shapes in the first and last recorded step of a cycle, N "
              "steps after the first, then at gaps doubling (2N, 4N, ...) while they stay the "
              "same; the steps between take them op by op (same op sequence), and view calls "
              "inside ops that ran only views are counted from the read step; 1 = every step"),
      int_key(LLMPROF_KEY(profile, max_events), 1000, 1000000000,
              "modules/ops: event buffer capacity per thread; full = recording stops, warned"),
      bool_key(LLMPROF_KEY(profile, trace),
               "modules/ops: write trace.json (Chrome trace format) of the recorded steps"),
      bool_key(LLMPROF_KEY(profile, trace_gzip),
               "modules/ops: write the trace gzip-compressed, as trace.json.gz (Perfetto and HTA "
               "read it)"),
      bool_key(LLMPROF_KEY(profile, nvtx),
               "NVTX ranges for each step, phase and module scope, so Nsight Systems/Compute show "
               "llmprof's names (any level; needs a build with the CUDA toolkit's NVTX3 headers)"),
      // energy
      bool_key(LLMPROF_KEY(energy, enabled),
               "sample CPU/GPU power and energy on a background thread"),
      int_key(LLMPROF_KEY(energy, sample_hz), 1, 1000, "power/energy samples per second"),
      float_key(LLMPROF_KEY(energy, cpu_tdp_w), closed(0, 100000),
                "CPU TDP for an estimate (x process CPU utilisation) when no sensor; 0 = none"),
      float_key(LLMPROF_KEY(energy, grid_gco2_per_kwh), closed(0, 10000),
                "grid carbon intensity in gCO2/kWh for co2_g; default 475: IEA world average, "
                "Global Energy & CO2 Status Report 2019 (as CodeCarbon and ML CO2 Impact use)"),
      string_key(LLMPROF_KEY(energy, sysfs_root),
                 "sysfs mount holding class/powercap/intel-rapl:* (RAPL)"),
      string_key(LLMPROF_KEY(energy, nvml_library),
                 "NVML library name or path, dlopen'ed at run time"),
      // runtime
      bool_key(LLMPROF_KEY(runtime, malloc_tuning),
               "apply the mallopt thresholds below at start-up"),
      int_key(LLMPROF_KEY(runtime, malloc_mmap_threshold_bytes), 0, kNoIntMax,
              "M_MMAP_THRESHOLD: smaller blocks come from the heap"),
      int_key(LLMPROF_KEY(runtime, malloc_trim_threshold_bytes), 0, kNoIntMax,
              "M_TRIM_THRESHOLD: free heap kept before trimming"),
      // eval
      string_key(LLMPROF_KEY(eval, paths),
                 "llmprof eval/bench: comma-separated [name=]path eval sets besides validation"),
      int_key(LLMPROF_KEY(eval, max_batches), 0, kNoIntMax,
              "llmprof eval/bench: batches per eval set; 0 = the whole set"),
      int_key(LLMPROF_KEY(eval, batch_size), 0, 1 << 20,
              "llmprof eval/bench quality: batch size; 0 = train.batch_size (bench: its first)"),
      // bench
      string_key(LLMPROF_KEY(bench, variants),
                 "comma-separated variants: fp32, bf16 (autocast), int8 (dynamic quantization, "
                 "CPU), fp16 (autocast, CUDA)"),
      string_key(LLMPROF_KEY(bench, batch_sizes), "comma-separated batch sizes to time"),
      int_key(LLMPROF_KEY(bench, warmup_iters), 0, kNoIntMax,
              "untimed forward passes per variant and batch size"),
      int_key(LLMPROF_KEY(bench, iters), 1, kNoIntMax,
              "timed forward passes per variant and batch size"),
      enum_key<LLMPROF_REF(bench, quant_engine)>(
          "int8 quantized engine (LibTorch 1.13 CPU here: onednn, qnnpack)"),
      int_key(LLMPROF_KEY(bench, generate_tokens), 0, 1 << 20,
              "gpt: tokens generated with the KV cache after the prompt; 0 = no generation"),
      int_key(LLMPROF_KEY(bench, prompt_tokens), 0, 1 << 20,
              "gpt: prompt length for generation; 0 = model.block_size / 2"),
      // output
      string_key(LLMPROF_KEY(output, dir), "parent directory of run directories"),
      string_key(LLMPROF_KEY(output, name),
                 "run directory name; empty = <config stem>-<timestamp>"),
      // ddp
      float_key(LLMPROF_KEY(ddp, bucket_mb), open_closed(0, 65536),
                "data-parallel: gradient bucket cap in MiB after the first (DDP's bucket_cap_mb)"),
      float_key(LLMPROF_KEY(ddp, first_bucket_mb), open_closed(0, 65536),
                "data-parallel: cap of the first gradient bucket in MiB"),
      bool_key(LLMPROF_KEY(ddp, overlap),
               "data-parallel: all-reduce each bucket as backward fills it; false = every bucket "
               "after backward's compute"),
      float_key(LLMPROF_KEY(ddp, timeout_s), open_closed(0, 86400),
                "data-parallel: seconds for the rendezvous and each collective; a dead or stopped "
                "rank ends the others within it"),
      enum_key<LLMPROF_REF(ddp, backend)>(
          "data-parallel communication: auto (gloo on cpu, nccl on cuda) | gloo | nccl"),
      // top level
      int_key(LLMPROF_TOP_KEY(threads), 0, 1024, "intra-op threads; 0 = all cores"),
      enum_key<LLMPROF_REF(device, kind)>("device to train on: cpu | cuda | cuda:N"),
      int_key("device_index", &member<&Config::device, &Device::index>, 0, 1023,
              "cuda: device ordinal; `device: cuda:N` sets it"),
  };
}

#undef LLMPROF_KEY
#undef LLMPROF_TOP_KEY
#undef LLMPROF_REF
#undef LLMPROF_TOP_REF

// An int bound as printed in a range: the number, or "inf".
std::string int_bound(int64_t v) { return v == kNoIntMax ? "inf" : std::to_string(v); }

}  // namespace

const std::vector<KeySpec>& key_table() {
  static const std::vector<KeySpec> table = build_table();
  return table;
}

const KeySpec* find_key(const std::string& path) {
  static const std::unordered_map<std::string, const KeySpec*> index = [] {
    std::unordered_map<std::string, const KeySpec*> m;
    for (const KeySpec& s : key_table()) m.emplace(s.path, &s);
    return m;
  }();
  auto it = index.find(path);
  return it == index.end() ? nullptr : it->second;
}

std::string group_of(const std::string& path) {
  auto dot = path.find('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

bool is_group(const std::string& name) {
  if (name.empty()) return false;
  for (const KeySpec& s : key_table()) {
    if (group_of(s.path) == name) return true;
  }
  return false;
}

std::string type_name(KeyType type) {
  return std::string(config::name(type));
}

std::string range_text(const KeySpec& spec) {
  switch (spec.type) {
    case KeyType::kInt:
      return fmt::format("[{}, {}{}", spec.int_min, int_bound(spec.int_max),
                         spec.int_max == kNoIntMax ? ")" : "]");
    case KeyType::kFloat:
      return fmt::format("{}{}, {}{}", spec.min_open ? "(" : "[", spec.float_min,
                         spec.float_max == kInf ? "inf" : fmt::format("{}", spec.float_max),
                         spec.max_open ? ")" : "]");
    case KeyType::kEnum:
      return fmt::format("{}", fmt::join(spec.choices, "|"));
    case KeyType::kBool:
      return "true|false";
    case KeyType::kString:
      return "";
  }
  return "";
}

}  // namespace llmprof::config::detail
