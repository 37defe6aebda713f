// The top directory of a data-parallel run, merged from its ranks' records after the run: a
// steps.csv with the columns of a rank's (each row the whole job's step) and the figures of
// summary.json that are global, beside each rank's own. Pure functions over rows: rank 0's merge
// (train) and the tests call the same ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/rundir/summary.h"
#include "llmprof/rundir/tables.h"

namespace llmprof::rundir {

// One global row per step that every rank recorded, in step order:
// - step_ms and every time of the step (its phases, host and GPU times) are the slowest rank's
//   (largest step_ms; slowest_rank names it): a data-parallel step ends when its slowest rank's
//   does; eval_ms is the longest over ranks (the eval ends with an all-reduce);
// - tokens, flops, energy_j, avg_power_w, faults, switches and cpu_ms are summed over ranks;
//   tokens_per_s and flops_per_s are those sums over the slowest rank's step_ms;
// - mfu is against all ranks' peak: the sum over ranks of flops_r / (slowest step_ms x peak_r x
//   ranks) = the mean over ranks of mfu_r x step_ms_r / slowest step_ms;
// - loss is the mean of the ranks' losses (each over the same number of samples); lr, grad_norm,
//   loss_scale and step_skipped are rank 0's (the same on every rank after the all-reduce);
//   max_rss_bytes and the device memory columns the largest over ranks.
// A step some rank lacks (a rank that stopped first) is left out.
std::vector<StepRow> merge_rank_steps(const std::vector<std::vector<StepRow>>& ranks);

// summary.json's timing, throughput, FLOPs and MFU of the merged rows after `warmup_steps` rows,
// each a global figure (merge_rank_steps); samples_per_step: all ranks' samples in one step (0:
// unknown, samples_per_s null).
struct GlobalFigures {
  TimingFigures timing;
  ThroughputFigures throughput;
  std::optional<Stats> achieved_flops_per_s, mfu;
};
GlobalFigures global_figures(const std::vector<StepRow>& merged,
                             int64_t warmup_steps,
                             double samples_per_step);

// One rank's own figures (medians after warm-up) from its summary.json, for the merged summary's
// distributed.ranks, which lists the straggler first.
RankFigures rank_figures(int64_t rank, const Summary& s);

// The scaling efficiency of a run of n ranks against a run of one: (global tokens/s at n) /
// (n x tokens/s at 1); nullopt when either is unknown or n < 1.
std::optional<double> scaling_efficiency(std::optional<double> tokens_per_s_n,
                                         int64_t n,
                                         std::optional<double> tokens_per_s_1);

}  // namespace llmprof::rundir
