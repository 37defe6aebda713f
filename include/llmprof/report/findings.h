// Findings: data-driven rules, one function each, that read a run's figures and, when a threshold
// is crossed, return the measured figure, the threshold and a suggested change: --set key=value
// only when the value passes the key's range and the cross-key checks against the run's config
// (and, for train.eval_interval, lies within the run's steps); otherwise what to change, in words.
// A rule whose inputs are unknown stays silent.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llmprof/report/document.h"
#include "llmprof/report/metrics.h"
#include "llmprof/report/run.h"

namespace llmprof::report {

// Thresholds of the rules (fractions are of the median step unless said otherwise).
inline constexpr double kDataWaitMaxShare = 0.10;              // data wait / step
inline constexpr double kEvalMaxShare = 0.15;                  // eval / wall time (steps + evals)
inline constexpr double kOptimizerMaxShare = 0.25;             // optimizer / step
inline constexpr double kAttentionCoreMaxShare = 0.30;         // attn.core / block, fwd + bwd
inline constexpr double kLowMfu = 0.30;                        // median MFU below this ...
inline constexpr double kSmallBatch = 8;                       // ... with batch_size <= this
inline constexpr double kMemoryHeadroomShare = 0.50;           // peak RSS / host memory below this
inline constexpr double kMaxMinorFaultsPerStep = 100;          // median minor faults per step
inline constexpr double kMaxInvoluntarySwitchesPerStep = 100;  // median per step
inline constexpr double kRooflineLostMinShare = 0.05;          // top op's lost_ms / step
inline constexpr double kBf16MinPeakRatio = 1.2;               // bf16 / fp32 matmul peak
inline constexpr double kExposedCommMaxShare = 0.10;           // exposed all-reduce / step
inline constexpr double kStragglerMinShare = 0.05;             // straggler's launch lag / step
inline constexpr double kCommBandwidthMinShare = 0.3;  // largest bucket's busbw / peak --comm roof

// Data wait above 10% of the step: more loader workers.
std::optional<Finding> rule_data_wait(const Run& run, const RunMetrics& m);

// Eval above 15% of wall time: evaluate less often or on fewer batches.
std::optional<Finding> rule_eval_share(const Run& run, const RunMetrics& m);

// Optimizer above 25% of the step: optim.fused=true (adam/adamw), or a larger batch or more
// accumulation steps to amortise it.
std::optional<Finding> rule_optimizer_share(const Run& run, const RunMetrics& m);

// attn.core (fwd + bwd) above 30% of block time: a shorter block_size (attention is O(T^2)).
std::optional<Finding> rule_attention_core(const Run& run, const RunMetrics& m);

// Median MFU below 30% with batch_size <= 8: a larger batch.
std::optional<Finding> rule_low_mfu_small_batch(const Run& run, const RunMetrics& m);

// Peak RSS below 50% of host memory: room for a larger batch.
std::optional<Finding> rule_memory_headroom(const Run& run, const RunMetrics& m);

// Median minor page faults per step above 100: allocator settings.
std::optional<Finding> rule_page_faults(const Run& run, const RunMetrics& m);

// Median involuntary context switches per step above 100: fewer threads than busy cores.
std::optional<Finding> rule_context_switches(const Run& run, const RunMetrics& m);

// The op with the most time above the roofline (ops.csv lost_ms) losing more than 5% of the
// step: what its bound suggests (overhead: larger calls; memory: fusion, bf16; compute: bf16).
std::optional<Finding> rule_roofline(const Run& run, const RunMetrics& m);

// An fp32 run on a CPU with native bf16 (avx512_bf16 / amx_bf16) whose measured bf16 matmul
// peak is more than 1.2x the fp32 one: train.precision=bf16.
std::optional<Finding> rule_precision(const Run& run, const RunMetrics& m);

// Data-parallel (comm_steps.csv): exposed communication above 10% of the step. Each suggestion
// says its mechanism and is made only where it applies, from the last bucket layout
// (collectives.csv): with one bucket (overlap needs two), a ddp.first_bucket_mb that splits it;
// ddp.overlap=true when it was off; else a ddp.bucket_mb that splits the largest bucket after
// the first (half the cap when that does, else half that bucket); and more accumulation steps.
std::optional<Finding> rule_exposed_comm(const Run& run, const RunMetrics& m);

// Data-parallel: the rank that launches all-reduces last most often, when its median launch lag
// is above 5% of the step: that rank and the phase its extra time is in (more loader workers
// when it is data).
std::optional<Finding> rule_straggler(const Run& run, const RunMetrics& m);
// The largest bucket's all-reduce bus bandwidth below kCommBandwidthMinShare of the roof that
// `llmprof peak --comm` measured (env.json peak_comm); nothing without a roof.
std::optional<Finding> rule_comm_bandwidth(const Run& run, const RunMetrics& m);

// Every rule, in report order, applied to one run; each finding's sets are the `--set`s its
// suggestion names, and it is an experiment when one of them changes train.precision.
std::vector<Finding> run_findings(const Run& run, const RunMetrics& m);

// Gives each finding the entries of `tried` (a run's tried.json) whose set its suggestion names.
void attach_tried(std::vector<Finding>& findings, const std::vector<TriedSet>& tried);

}  // namespace llmprof::report
