// The typed configuration of an llmprof run: one struct per concern, defaults commented like
// nanoGPT's GPTConfig. Files (YAML or JSON) and --set overrides fill it through the key schema in
// config/schema.h; every key's type, range and doc live there.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::config {

struct ModelConfig {
  ModelType type = ModelType::kGpt;  // gpt (nanoGPT decoder) | distilbert (encoder)
  int64_t n_layer = 4;       // transformer blocks
  int64_t n_head = 4;        // attention heads; must divide n_embd
  int64_t n_embd = 128;      // residual stream width C
  int64_t block_size = 64;   // context length T
  int64_t vocab_size = 0;    // 0 = taken from the tokenizer
  double dropout = 0.0;      // 0 for speed and determinism; 0.2 as nanoGPT shakespeare-char
  bool bias = true;          // bias in Linear and LayerNorm, as GPT-2
  int64_t ffn_dim = 0;       // distilbert FFN width F; 0 = 4 * n_embd (3072 in distilbert-base)
  int64_t max_positions = 0;  // position-embedding rows; 0 = block_size (gpt2: 1024, distilbert: 512)
  Activation activation = Activation::kGelu;  // gpt MLP: gelu (exact) | gelu_tanh (GPT-2)
  Attention attention = Attention::kManual;   // gpt attention core: manual | sdpa (fused)
  bool fused_loss = false;   // cuda: cross-entropy as llmprof's two kernels, not LibTorch's ops
  bool fused_norm = false;   // residual add + LayerNorm/RMSNorm as one op (kernels on cuda)
  int64_t num_labels = 2;    // train.task=classify: classes
  std::string init_from;     // llmprof checkpoint or run directory, or a Hugging Face folder
  // llama (Llama, Qwen2, Mistral, SmolLM2 shapes): RoPE, RMSNorm, SwiGLU, grouped-query attention.
  int64_t n_kv_head = 0;           // key/value heads; must divide n_head; 0 = n_head (MHA)
  int64_t intermediate_size = 0;   // SwiGLU width; 0 = 4 * n_embd
  double rope_theta = 10000.0;     // RoPE base (Llama 2: 1e4, SmolLM2: 1e5, Llama 3: 5e5)
  double rms_norm_eps = 1e-5;      // RMSNorm epsilon (Llama 2 uses 1e-6)
  bool tie_embeddings = false;     // lm_head shares embed_tokens.weight (SmolLM2, Qwen2-0.5B)
  int64_t head_dim = 0;            // per-head width; 0 = n_embd / n_head
  bool attention_bias = false;     // biases on q/k/v projections (Qwen2)
  bool fused_swiglu = false;       // silu(gate) * up as one op (kernels on cuda)
  int64_t sliding_window = 0;      // Mistral's window; 0 = none; must be >= block_size
  RopeScaling rope_scaling_type = RopeScaling::kNone;  // none | llama3
  double rope_scaling_factor = 8.0;              // llama3: wavelength stretch of low frequencies
  double rope_scaling_low_freq_factor = 1.0;     // llama3
  double rope_scaling_high_freq_factor = 4.0;    // llama3
  int64_t rope_scaling_original_max_position_embeddings = 8192;  // llama3
};

struct DataConfig {
  std::string path;                 // text file; empty = the built-in generated corpus
  TokenizerKind tokenizer = TokenizerKind::kChar;  // char | gpt2 | wordpiece | hf
  std::string vocab_path;           // gpt2: encoder.json; wordpiece: vocab.txt; hf: tokenizer.json
  std::string merges_path;          // gpt2: vocab.bpe
  bool lower_case = true;           // wordpiece: uncased vocabulary (do_lower_case)
  double val_fraction = 0.1;        // tail of the token stream held out for eval
  int64_t num_workers = 1;          // background batch-producing threads; 0 = in the step
  int64_t prefetch = 4;             // bounded queue depth (batches)
  int64_t generated_chars = 1000000;  // size of the generated corpus when path is empty
  // Encoder datasets (model.type=distilbert); .gz files are read directly.
  DataFormat format = DataFormat::kAuto;  // auto (by extension) | text | jsonl | csv | tsv
  std::string val_path;             // validation file; empty = the tail val_fraction of data.path
  std::string jsonl_fields = "text";  // jsonl: comma-separated string fields, joined by newlines
  std::string text_column = "text";   // csv/tsv: text column header
  std::string label_column = "label";  // csv/tsv: integer label column (train.task=classify)
  int64_t max_examples = 0;         // records used from data.path; 0 = all (a seeded random subset)
  int64_t val_max_examples = 0;     // records used from the validation data; 0 = all
  double mlm_probability = 0.15;    // fraction of tokens selected for masked-LM prediction (BERT)
};

struct OptimConfig {
  Optimizer name = Optimizer::kAdamw;  // sgd | adam | adamw
  double lr = 1e-3;            // peak learning rate (after warmup)
  double weight_decay = 0.1;   // adamw: decoupled; adam/sgd: L2
  double beta1 = 0.9;
  double beta2 = 0.99;         // nanoGPT shakespeare-char uses 0.99 for small batches
  double eps = 1e-8;
  double momentum = 0.9;       // sgd only
  double grad_clip = 1.0;      // max global grad norm; 0 = off
  bool fused = false;          // adam/adamw: one fused kernel set per step (LibTorch >= 2.1 CUDA, >= 2.4 CPU)
};

struct ScheduleConfig {
  int64_t warmup_steps = 10;  // linear warmup from 0 to optim.lr
  bool cosine = true;         // cosine decay from optim.lr to min_lr at max_steps
  double min_lr = 1e-4;
  int64_t max_steps = 200;    // optimizer steps in the run
};

struct TrainConfig {
  int64_t batch_size = 12;          // sequences per micro-batch B
  int64_t grad_accum_steps = 1;     // micro-batches per optimizer step
  int64_t eval_interval = 50;       // eval every N steps (and at the last step); 0 = never
  int64_t eval_steps = 10;          // batches per split per eval
  int64_t seed = 1337;
  Precision precision = Precision::kFp32;  // fp32 | bf16 (autocast) | fp16 (autocast, cuda)
  bool activation_checkpointing = false;  // recompute each block's forward in backward
  TaskKind task = TaskKind::kLm;          // lm (gpt next token) | mlm | classify (distilbert)
  bool save_checkpoint = false;     // write <run>/checkpoint (weights + config) at the end
  int64_t checkpoint_interval = 0;  // also every N steps (<run>/checkpoint-step<N>); 0 = end only
  bool cuda_graphs = false;  // cuda: capture forward+backward+optimizer once, replay each step
  // cuda: the caching allocator's expandable segments (expandable_segments:True, LibTorch >= 2.1),
  // set before the first CUDA allocation: one growing segment per pool, no fragmentation gaps.
  bool cuda_expandable_segments = false;
  std::string resume_from;   // a checkpoint folder: weights, optimizer, random states, step
  // TEST ONLY: slept in every micro-batch's forward phase, a known slowdown for measuring the
  // A/B gate's catch rate (scripts/bench/check_rates.sh); 0 = none.
  double test_step_sleep_ms = 0;
};

struct ProfileConfig {
  ProfileLevel level = ProfileLevel::kPhases;  // off | phases | modules | ops
  double peak_flops_per_s = 0;      // MFU denominator; 0 = measure with an sgemm calibration
  double peak_bytes_per_s = 0;      // roofline memory roof; 0 = measure (STREAM triad) at ops
  double peak_busbw_bytes_per_s = 0;  // all-reduce bus bandwidth roof (llmprof peak --comm); 0 = none
  int64_t warmup_steps = 5;         // first steps left out of summary statistics
  // Which steps the modules/ops levels record, as torch.profiler's schedule: skip `wait`, trace
  // `warmup` (discarded), record `active`; `repeat` cycles (0 = until the end). Phases: every step.
  int64_t schedule_wait = 5;
  int64_t schedule_warmup = 1;
  int64_t schedule_active = 5;
  int64_t schedule_repeat = 1;
  bool record_shapes = false;       // ops: shapes of every op, not only the FLOP-counted ones
  bool record_view_ops = false;     // ops: time view/metadata ops too (else counted only)
  int64_t shape_interval = 8;       // ops: read input shapes N recorded steps after the first,
                                    // then at gaps doubling while they stay the same (+ last)
  int64_t max_events = 2000000;     // per-thread event buffer capacity
  bool trace = true;                // write trace.json
  bool trace_gzip = false;          // ... as trace.json.gz
  bool nvtx = false;                // NVTX ranges per step, phase and module scope (nsys, ncu)
};

struct EnergyConfig {
  bool enabled = true;                // sample power/energy on a background thread
  int64_t sample_hz = 10;             // sampler rate; RAPL and NVML update every ~1-100 ms
  double cpu_tdp_w = 0;               // CPU TDP for the estimate when no sensor; 0 = no estimate
  double grid_gco2_per_kwh = 475;     // IEA world-average grid carbon intensity (Global Energy &
                                      // CO2 Status Report 2019), CodeCarbon's world default
  std::string sysfs_root = "/sys";    // RAPL lives under <sysfs_root>/class/powercap
  std::string nvml_library = "libnvidia-ml.so.1";  // dlopen'ed at run time; absent = no GPU power
};

struct RuntimeConfig {
  bool malloc_tuning = true;                   // mallopt thresholds below at start-up
  int64_t malloc_mmap_threshold_bytes = 33554432;   // 32 MiB: activations stay on the heap
  int64_t malloc_trim_threshold_bytes = 1073741824;  // 1 GiB: no trimming every step
};

// llmprof eval and bench: extra datasets and how much of each to use.
struct EvalConfig {
  std::string paths;        // comma-separated [name=]path eval sets besides the validation split
  int64_t max_batches = 0;  // batches per eval set; 0 = the whole set
  int64_t batch_size = 0;   // 0 = train.batch_size
};

// llmprof bench: forward-only inference speed and quality of model variants.
struct BenchConfig {
  // Comma-separated fp32 | bf16 (autocast) | int8 (dynamic quant); typed by bench_variants().
  std::string variants = "fp32,bf16,int8";
  std::string batch_sizes = "1,8";          // comma-separated batch sizes
  int64_t warmup_iters = 5;                 // untimed forward passes per (variant, batch)
  int64_t iters = 30;                       // timed forward passes per (variant, batch)
  QuantEngine quant_engine = QuantEngine::kOnednn;  // int8 engine: onednn | qnnpack | fbgemm | x86
  int64_t generate_tokens = 32;             // gpt: tokens generated with the KV cache; 0 = none
  int64_t prompt_tokens = 0;                // gpt: prompt length; 0 = block_size / 2
};

struct OutputConfig {
  std::string dir = "runs";  // parent of run directories
  std::string name;          // run directory name; empty = <config stem>-<timestamp>
};

// Data-parallel training (world size > 1, from the launcher's environment): PyTorch
// DistributedDataParallel's gradient buckets and their defaults.
struct DdpConfig {
  double bucket_mb = 25;             // bucket cap after the first (DDP's bucket_cap_mb)
  double first_bucket_mb = 1;        // cap of the first bucket (DDP's first bucket: 1 MiB)
  bool overlap = true;               // all-reduce each bucket as backward fills it; false = all
                                     // buckets after backward's compute, as the comparison
  double timeout_s = 120;            // rendezvous, store and every collective; a dead or stopped
                                     // rank ends the others within it
  DdpBackend backend = DdpBackend::kAuto;  // auto = gloo on cpu, nccl on cuda
};

struct Config {
  ModelConfig model;
  DataConfig data;
  OptimConfig optim;
  ScheduleConfig schedule;
  TrainConfig train;
  ProfileConfig profile;
  EnergyConfig energy;
  RuntimeConfig runtime;
  EvalConfig eval;
  BenchConfig bench;
  OutputConfig output;
  DdpConfig ddp;
  int64_t threads = 0;        // intra-op threads; 0 = all cores
  Device device;              // keys device (cpu | cuda | cuda:N) and device_index
  std::string source_file;     // the file the config came from (not a key)
  // Not keys: what loading adjusted (e.g. a warm-up clamped to a short run), for the run's log
  // and summary; and the keys given with --set, each with its assignment.
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, std::string>> set_keys;  // (key path, "key=value")
  // Every key the user gave, in the config file or with --set, with where: ("model.n_layer",
  // "configs/x.yaml line 3" or "--set model.n_layer=6").
  std::vector<std::pair<std::string, std::string>> given_keys;
  // Not keys: the data.* tokenizer keys the user gave, with their values, when model.init_from's
  // Hugging Face folder supplied the tokenizer instead (set by train; recorded in the checkpoint,
  // so that the same config evaluates the run without a tokenizer conflict).
  std::vector<std::pair<std::string, std::string>> given_tokenizer_keys;
};

}  // namespace llmprof::config
