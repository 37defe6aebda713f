// The search space of `llmprof tune`: knobs (a config key, or batch with accumulation), their
// values as --sets, whether each keeps the training's numerics, and each value's predicted
// effect with its source. Torch-free: candidates are planned, never built here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config/config.h"
#include "llmprof/plan/device.h"

namespace llmprof::tune {

// Whether a knob keeps the loss after N steps at one seed (within --loss-tolerance, checked) or
// changes it (reported beside its speed).
enum class Numerics : int { kKept = 0, kChanged = 1 };
std::string_view numerics_name(Numerics n);  // "kept" | "changed"

// A value's predicted step time per token relative to the start (below 1: faster), and where the
// figure comes from:
//  - train.batch_size (with or without accumulation): "plan: DRAM bytes per token", the
//    planner's roofline bytes of a step (weights, gradients and optimizer state read once per
//    micro-batch) over its tokens;
//  - train.activation_checkpointing: "plan: FLOPs per token", the planner's step FLOPs with the
//    recomputed forward;
//  - train.precision: the device table's fp32 / bf16 peak where both are known, else 1 ("none");
//  - threads: "prior: ideal scaling over cores" (old threads / new threads);
//  - model.attention sdpa 0.9, optim.fused 0.95, model.fused_loss 0.95, model.fused_norm 0.97
//    and model.fused_swiglu 0.98 (neither measured on a GPU yet), train.cuda_graphs 0.9,
//    data.num_workers above 0 0.97, ddp.bucket_mb 0.98: "prior: fixed" (the inverse to turn one
//    off); train.cuda_expandable_segments 1, "prior: memory, not speed"; any other key 1, "none".
struct Prediction {
  double ratio = 1;
  std::string source;
};

struct KnobValue {
  std::vector<std::string> sets;  // key=value, one or two
  Prediction prediction;
};

struct Knob {
  std::string key;  // a config key, or "train.batch_size+train.grad_accum_steps"
  std::vector<KnobValue> values;
  Numerics numerics = Numerics::kChanged;
  double effect() const;  // the largest |log ratio| over its values: the search order
};

// What the generated space depends on besides the config.
struct Machine {
  plan::DeviceSpec device;    // cuda: the GPU-only knobs
  int64_t cores = 1;          // threads' values (CPU)
  int64_t nproc = 1;          // above 1: ddp.bucket_mb
  int64_t largest_batch = 0;  // the planner's largest micro-batch that fits (0: unknown)
  int64_t vocab_size = 0;     // the tokenizer's (plan::tokenizer_vocab_size), for the planner
};

// A config is the base config (file + --set): the numerics class of a key's change in it.
Numerics numerics_of(const std::string& key, const config::Config& base);

// The prediction for a candidate's sets against base on machine (product over its keys).
Prediction predict(const config::Config& base,
                   const std::vector<std::string>& sets,
                   const Machine& machine);

// --space KEY=V1,V2,...: each a knob; every value is checked by loading config_path with
// base_sets and it (ConfigError naming the key and value, exit 2, for an unknown key, with the
// nearest one, a value outside the key's domain, or a key the model type does not have); a key
// the trials fix (schedule.max_steps, train.seed, output.*, ...) is a UsageError. Knobs in the
// order of their predicted effect (largest first).
std::vector<Knob> parse_space(const std::string& config_path,
                              const std::vector<std::string>& base_sets,
                              const std::vector<std::string>& space,
                              const Machine& machine);

// The space from the config and the machine, each value kept only where the config loads with
// it (a key the model type has): batch with accumulation keeping the global batch (and double the
// micro-batch, changing it) up to machine.largest_batch; threads (CPU); precision; activation
// checkpointing; attention; fused loss and optimizer; data workers; CUDA graphs and the caching
// allocator's expandable segments (CUDA); buckets (nproc > 1). Knobs in the order of their
// predicted effect.
std::vector<Knob> default_space(const std::string& config_path,
                                const std::vector<std::string>& base_sets,
                                const Machine& machine);

// Drops the knobs that change the numerics (--keep-numerics); returns the keys dropped.
std::vector<std::string> keep_numerics_only(std::vector<Knob>& knobs);

// One point of the space: the sets of one value of some knobs.
struct CandidateSets {
  std::vector<std::string> sets;
  Numerics numerics = Numerics::kKept;
  Prediction prediction;
};

// Above this many grid points the candidates are one knob at a time.
inline constexpr int64_t kMaxGridCandidates = 16;

// The candidates: every combination of the knobs' values (the grid) when it has at most
// kMaxGridCandidates points, else each value of each knob alone; a point whose config equals the
// start's is left out. In the order of predicted effect (stable: knob order breaks ties).
std::vector<CandidateSets> candidates_of(const std::vector<Knob>& knobs,
                                         const std::string& config_path,
                                         const std::vector<std::string>& base_sets);

}  // namespace llmprof::tune
