// llmprof plan: the memory of one training step predicted from the config alone, by component,
// with the place of its peak, before anything is allocated. The model is an event simulation of
// the step: each op of the forward allocates what autograd saves for its backward (plus its
// transient outputs), the loss adds its buffers, the backward walks the ops in reverse freeing
// saved tensors and allocating gradients, the optimizer adds its state and temporaries. Byte
// counts follow how llmprof's own models compute (src/model/gpt.cpp, distilbert.cpp): each term
// below names the tensor it counts. Torch-free: the CLI and train both call it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/plan/device.h"
#include "llmprof/rundir/plan_reconciliation.h"

namespace llmprof::plan {

// The parts of a step's memory. Values are stable: they index tables and name JSON fields.
enum class Component : int {
  kParameters = 0,      // fp32 master weights
  kGradients = 1,       // fp32 .grad, at their largest (all of them, before the optimizer)
  kOptimizerState = 2,  // adam/adamw: exp_avg + exp_avg_sq; sgd: momentum buffer
  kBuffers = 3,         // registered buffers (causal masks, position ids)
  kBatch = 4,           // the micro-batch's index tensors (int64)
  kActivations = 5,     // saved for backward by all blocks + embedding + final norm
  kAutocastCopies = 6,  // bf16/fp16 casts of weights (and inputs) kept for backward
  kLossBuffers = 7,     // logits' log-softmax (or the fused loss's row stats)
  kTransient = 8,       // what the op at the peak adds on top (gradients in flight, temporaries)
  kDdpBuckets = 9,      // data-parallel gradient buckets (a gradient-sized flat copy)
};
inline constexpr int kNumComponents = 10;
// "parameters", "gradients", "optimizer_state", ...
std::string_view component_name(Component c);

// Where in a step something happens: the phase and the module (e.g. backward, h0.attn.softmax).
struct Place {
  std::string phase;   // forward | loss | backward | optimizer
  std::string module;  // e.g. "h3.mlp.act", "lm_head", "adamw"
};

// Bytes saved for backward by one module of one block (or by the embedding/head), by dtype.
struct ModuleBytes {
  std::string module;  // e.g. "attn.softmax"
  std::string dtype;   // fp32 | bf16 | fp16 | bool | mixed
  int64_t bytes = 0;
};

// What the planner needs beyond the config: the vocabulary (the tokenizer's, when model.vocab_size
// is 0), the data-parallel world size (rows of the technique table), the device.
// How the CUDA caching allocator gets its memory (PYTORCH_CUDA_ALLOC_CONF): the default one
// cudaMalloc segment per large request, which fragmentation can leave unusable; or
// expandable_segments:True, one segment mapped as it grows.
enum class CudaAllocator : int { kCaching = 0, kExpandableSegments = 1 };
// "caching" | "expandable_segments"
std::string_view allocator_name(CudaAllocator a);
// The allocator a PYTORCH_CUDA_ALLOC_CONF value selects ("expandable_segments:True" among its
// comma-separated options; empty or absent: kCaching).
CudaAllocator cuda_allocator_of(std::string_view alloc_conf);
// The allocator this process's environment selects, as the caching allocator reads it
// (PYTORCH_CUDA_ALLOC_CONF, or PYTORCH_ALLOC_CONF as LibTorch 2.9+ also reads).
CudaAllocator cuda_allocator_from_env();
// The allocator a run of cfg gets: expandable segments when train.cuda_expandable_segments sets
// them (train configures the allocator so), else `otherwise` (the environment's, or --allocator).
CudaAllocator cuda_allocator_for(const config::Config& cfg, CudaAllocator otherwise);

// Reserved by the caching allocator beyond the tensors of the step's peak, whatever the batch:
// cuBLAS's workspace (32 MiB on Hopper), cuDNN attention's workspace and the small pool's 2 MiB
// segments. Measured on an H200 (LibTorch 2.11, CUDA 13) with expandable segments as reserved
// minus the planned peak: 133 and 136 MiB (GPT-2 small, batch 19 and 43), 172 and 145 MiB
// (configs/llama_cuda.yaml, batch 13 and 14); the largest, rounded up.
inline constexpr int64_t kCudaWorkspaceBytes = int64_t{176} << 20;
// How peak_reserved_bytes is predicted under allocator `a` (an estimate, or an upper bound).
std::string cuda_reserved_model(CudaAllocator a);

// What the optimizer holds per parameter: as the config's optim.* says (AdamW: exp_avg and
// exp_avg_sq, 8 bytes), or nothing: weights and gradients only, as the profiling lecture's
// LLaMA-7B table counts (its 52 GB baseline is 8 bytes per parameter).
enum class OptimizerStates : int { kAsConfigured = 0, kNone = 1 };

struct PlanOptions {
  int64_t vocab_size = 0;  // 0: model.vocab_size
  int64_t world_size = 1;  // >1: data-parallel buckets (a gradient-sized flat copy per rank)
  bool cuda = false;       // the CUDA caching allocator's rounding and CUDA's op choices
  // With cuda: how reserved is predicted (a config's train.cuda_expandable_segments overrides).
  CudaAllocator allocator = CudaAllocator::kCaching;
  OptimizerStates optimizer_states = OptimizerStates::kAsConfigured;
};

struct MemoryPlan {
  int64_t parameters = 0;  // count
  int64_t parameter_bytes = 0, buffer_bytes = 0, gradient_bytes = 0, optimizer_state_bytes = 0;
  std::vector<int64_t> component_bytes;  // kNumComponents entries, at the predicted peak
  // Totals of the step, independent of when they are live.
  int64_t activations_bytes = 0;            // all saved activations at the end of the forward
  int64_t activations_per_block_bytes = 0;  // one transformer block's
  // The most activations + loss buffers live at any moment of the step (with checkpointing: the
  // block inputs plus one block recomputed in the backward); the peak may hold fewer.
  int64_t activation_peak_bytes = 0;
  // The most bytes live at once beside the model states (parameters, gradients, optimizer state,
  // autocast copies, DDP buckets): what a rank holds on top of its sharded states.
  int64_t beyond_states_peak_bytes = 0;
  int64_t beyond_states_activation_bytes = 0;  // activations + loss buffers at that moment
  int64_t largest_parameter = 0;  // elements of the largest parameter tensor (embedding, head)
  std::vector<ModuleBytes> block_modules;  // one block's, per module
  int64_t peak_bytes = 0;                  // tensor bytes at the peak (allocated)
  // CUDA: the peak + kCudaWorkspaceBytes, 2 MiB-rounded, + fragmentation_bytes (an estimate;
  // under the default caching allocator an upper bound). CPU: the peak.
  int64_t peak_reserved_bytes = 0;
  // The step's largest single tensor (e.g. the logits or their gradient): under the default
  // caching allocator, cached free blocks that cannot hold it may stay unusable, up to about
  // its size (measured on an H200: 0.55-0.82 of it at the out-of-memory edge); 0 otherwise.
  int64_t largest_tensor_bytes = 0;
  int64_t fragmentation_bytes = 0;
  Place peak_place;
  int64_t forward_end_bytes = 0;   // live at the end of the forward (loss included) above its start
  double flops_per_step = 0;       // matmul FLOPs of the step (forward + backward [+ recompute])
  double bytes_per_step = 0;       // DRAM bytes of the step's roofline (an estimate)
  std::vector<std::string> notes;  // what was assumed
};

// The step's memory as planned. Throws ConfigError naming a key the planner does not model.
MemoryPlan plan_memory(const config::Config& cfg, const PlanOptions& opt);

// The keys of cfg that change memory but the planner does not model, as "key: why" (empty: none).
std::vector<std::string> unmodelled_keys(const config::Config& cfg);

// The vocabulary the run's tokenizer will have, built as `llmprof train` builds it:
// model.vocab_size, the tokenizer files' (GPT-2's 50257 when none are named), or the char
// tokenizer over the run's corpus (data.path, or the generated one of data.generated_chars);
// 0 when only model.init_from's folder can tell. Throws DataError naming an unreadable file.
int64_t tokenizer_vocab_size(const config::Config& cfg);

// The largest train.batch_size whose predicted reserved peak fits `usable_bytes` (0 if none).
int64_t largest_batch(const config::Config& cfg, const PlanOptions& opt, int64_t usable_bytes);

// Model states of mixed-precision Adam per parameter as the ZeRO paper counts them (Rajbhandari
// et al. 2020, Figure 1): 2 (fp16 weights) + 2 (fp16 grads) + K=12 (fp32 master, m, v) = 16 bytes;
// sharded over N = world_size: ZeRO-1 4P + 12P/N, ZeRO-2 2P + 14P/N, ZeRO-3 16P/N.
enum class Sharding : int { kNone = 0, kZero1 = 1, kZero2 = 2, kZero3 = 3 };
int64_t model_state_bytes(int64_t parameters, Sharding sharding, int64_t world_size);

// The same as DeepSpeed's estimators compute them without offload
// (deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs: 4P + 16P/N;
// stage3.py estimate_zero3_model_states_mem_needs: 4 x largest_layer + 18P/N, largest_layer the
// parameters of the largest module). DeepSpeed has no ZeRO-1 estimator: kNone and kZero1 are the
// paper's.
int64_t deepspeed_model_state_bytes(int64_t parameters,
                                    int64_t largest_layer,
                                    Sharding sharding,
                                    int64_t world_size);

// The CUDA caching allocator's block size for a request (c10/cuda/CUDACachingAllocator.cpp:
// round up to 512 bytes) and the segment it comes from (<= 1 MiB: 2 MiB small segments; < 10 MiB:
// 20 MiB large segments; else rounded to 2 MiB).
int64_t cuda_block_bytes(int64_t request_bytes);
int64_t cuda_segment_bytes(int64_t block_bytes);

}  // namespace llmprof::plan

namespace llmprof::plan {

// Whose closed form a sharded row's model states follow (model_state_bytes or
// deepspeed_model_state_bytes).
enum class StateFormula : int { kPlanned = 0, kZeroPaper = 1, kDeepSpeedEstimator = 2 };
// "planned" | "ZeRO paper" | "DeepSpeed estimator"
std::string_view formula_name(StateFormula f);

// One row of the technique table: the config change, its predicted memory and step time.
struct TechniqueRow {
  std::string name;  // "baseline (fp32)", "+ bf16 autocast", "+ ZeRO-2 (world 8)"
  StateFormula source = StateFormula::kPlanned;  // sharded rows: whose model-state formula
  std::string formula;                           // sharded rows: "2P + 14P/N", ...
  bool predicted_only = false;                   // sharding rows: llmprof does not shard
  int64_t peak_bytes = 0;                        // predicted reserved peak per device
  int64_t model_state_bytes = 0;  // parameters + gradients + optimizer state (+ casts) per device
  int64_t activation_bytes = 0;   // activations + loss buffers held at the peak
  int64_t activation_peak_bytes = 0;  // the most activations + loss buffers live in the step
  bool fits = false;
  int64_t largest_batch = 0;      // the largest micro-batch that fits with this row's techniques
  std::optional<double> step_ms;  // roofline lower bound; nullopt: no peaks for the device
  int64_t micro_batch = 0;
  int64_t accumulation = 1;
};

// The whole answer of `llmprof plan`.
struct PlanReport {
  DeviceSpec device;
  MemoryPlan memory;  // the config as given
  bool fits = false;
  int64_t largest_batch = 0;          // train.batch_size that still fits (0: none)
  std::optional<double> step_ms;      // roofline lower bound of the config as given
  std::optional<double> calibration;  // measured / roofline, when a measured run was given
  std::string time_label;             // "roofline lower bound" or "calibrated on RUN"
  std::vector<TechniqueRow> techniques;
  // With OptimizerStates::kNone: the same rows with AdamW's states, as users train (else empty).
  std::vector<TechniqueRow> adamw_techniques;
  std::vector<std::string> table_notes;  // rows left out and why
  int64_t world_size = 8;
  CudaAllocator allocator = CudaAllocator::kCaching;  // on a CUDA device
  OptimizerStates optimizer_states = OptimizerStates::kAsConfigured;
};

// The roofline lower bound of a step: max(FLOPs / peak FLOP/s, bytes / bandwidth) in ms;
// nullopt when the device's peaks are unknown.
std::optional<double> roofline_step_ms(const MemoryPlan& m,
                                       const DeviceSpec& d,
                                       config::Precision precision);

// Plans cfg on device d: the memory, the largest batch, the technique table (world_size ranks for
// the data-parallel rows). Throws ConfigError for a config it cannot plan.
// Every model type gets every technique the planner models for it (DistilBERT: no checkpointing
// or sdpa rows, its model has neither). With OptimizerStates::kNone everything is planned without
// optimizer state and adamw_techniques holds the rows with AdamW beside. A config with
// train.cuda_expandable_segments plans with expandable segments whatever `allocator` says.
PlanReport make_report(const config::Config& cfg,
                       const DeviceSpec& d,
                       int64_t vocab_size,
                       int64_t world_size,
                       CudaAllocator allocator = CudaAllocator::kCaching,
                       OptimizerStates optimizer_states = OptimizerStates::kAsConfigured);

// Scales the report's step times by ratio = a measured step / its roofline bound (the run's own
// config on the same device), and labels them calibrated on `run`.
void calibrate(PlanReport& r, double ratio, const std::string& run);

// The report as JSON text (llmprof plan --format json; summary.json's plan section).
std::string report_json(const PlanReport& r);
// bytes in the unit that shows the value: "512 B", "32.0 KiB", "1.5 MiB", "13.38 GiB".
std::string bytes_text(int64_t bytes);
// What peak_reserved_bytes is on the report's device and allocator (estimate, upper bound).
std::string reserved_note(const PlanReport& r);

// A component whose prediction is off by more than this fraction of the measured bytes "differs".
inline constexpr double kDiffersFraction = 0.10;

struct Measured;
// summary.json's "plan" section (rundir's record, filled here): the config's plan (vocab_size: the
// tokenizer's when model.vocab_size is 0) beside what the run measured, per component. A config the
// planner cannot plan gives only its reason (unplanned_reason). On CUDA, `allocator` is the run's
// (cuda_allocator_from_env(); train.cuda_expandable_segments overrides it).
rundir::MemoryReconciliation reconcile(const config::Config& cfg,
                                       int64_t vocab_size,
                                       bool cuda,
                                       const Measured& measured,
                                       CudaAllocator allocator = CudaAllocator::kCaching);

}  // namespace llmprof::plan
