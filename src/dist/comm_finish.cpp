// The communication analysis at the end of a data-parallel run (comm_finish.h).
#include "comm_finish.h"

#include <fmt/format.h>

#include <algorithm>

#include "llmprof/rundir/files.h"
#include "llmprof/rundir/rank_merge.h"
#include "llmprof/rundir/read.h"

namespace llmprof::dist {

dist::CommSummary analyse_run_comm(const std::string& top_dir,
                                   const std::vector<dist::RankClock>& clocks) {
  dist::CommInput in;
  in.clocks = clocks;
  for (size_t r = 0; r < clocks.size(); ++r) {
    const std::string dir = fmt::format("{}/{}{}", top_dir, rundir::kRankDirPrefix, r);
    for (auto& row : rundir::read_comm(rundir::path(dir, rundir::kComm))) {
      in.comm.push_back(std::move(row));
    }
    for (auto& row : rundir::read_phase_spans(rundir::path(dir, rundir::kPhaseSpans))) {
      in.spans.push_back(row);
    }
  }
  dist::CommAnalysis a = dist::analyse_comm(in);
  rundir::write_clocks(rundir::path(top_dir, rundir::kClocks), a.clocks);
  rundir::write_collectives(rundir::path(top_dir, rundir::kCollectives), a.collectives);
  rundir::write_comm_steps(rundir::path(top_dir, rundir::kCommSteps), a.steps);
  a.summary.note =
      "steps after the first bucket layout, every rank; times on rank 0's clock (clocks.csv); "
      "tables: collectives.csv, comm_steps.csv";
  return a.summary;
}

namespace {

constexpr const char* kFiguresScope =
    "global: timing (per step, the slowest rank's step and its phases), throughput (all ranks' "
    "tokens and samples over that step), flops.achieved_flops_per_s and mfu (all ranks' FLOPs over "
    "it, against the sum of the ranks' peaks), loss.final_train_step_loss (the mean of the ranks' "
    "last step) and loss.eval (each eval's sums all-reduced over every rank's rows); rank 0's own: "
    "process, overhead, peak_rss_bytes, energy and the run's context; each rank's own: "
    "distributed.ranks (the straggler first)";

// The merged summary's figures from the merged rows and the ranks' own summaries.
void apply_global(rundir::Summary& s,
                  const std::vector<rundir::StepRow>& merged,
                  const std::vector<rundir::Summary>& ranks,
                  double samples_per_step) {
  const int64_t warmup = s.steps ? s.steps->warmup_excluded : 0;
  const rundir::GlobalFigures g = rundir::global_figures(merged, warmup, samples_per_step);
  s.timing = g.timing;
  s.throughput = g.throughput;
  if (s.flops) {
    s.flops->achieved_flops_per_s = g.achieved_flops_per_s;
    if (!merged.empty() && merged.back().flops) s.flops->analytic_per_step = merged.back().flops;
  }
  if (s.mfu) {
    double peak = 0;
    for (const rundir::Summary& r : ranks) peak += r.mfu ? r.mfu->peak_flops_per_s : 0.0;
    s.mfu->value = g.mfu;
    s.mfu->peak_flops_per_s = peak;
    s.mfu->peak_source = fmt::format("the sum of the {} ranks' peaks (rank 0's: {})", ranks.size(),
                                     s.mfu->peak_source);
  }
  if (s.steps && s.steps->completed > static_cast<int64_t>(merged.size())) {
    s.steps->completed = static_cast<int64_t>(merged.size());  // steps every rank finished
    s.steps->measured = std::max<int64_t>(0, s.steps->completed - s.steps->warmup_excluded);
  }
  if (s.loss && !merged.empty()) s.loss->final_train_step_loss = merged.back().loss;
  if (!merged.empty()) s.final_global_train_loss = merged.back().loss;
}

}  // namespace

rundir::Summary merge_top_dir(const std::string& top_dir,
                              int world_size,
                              double samples_per_step,
                              rundir::DistributedFigures distributed) {
  std::vector<std::vector<rundir::StepRow>> rows;
  std::vector<rundir::Summary> summaries;
  std::vector<rundir::EvalRow> evals;
  for (int r = 0; r < world_size; ++r) {
    const std::string dir = fmt::format("{}/{}{}", top_dir, rundir::kRankDirPrefix, r);
    rundir::Run run = rundir::load_run(dir);
    rows.push_back(std::move(run.steps));
    if (r == 0) evals = std::move(run.evals);
    std::vector<rundir::InputWarning> warnings;
    summaries.push_back(rundir::read_summary(rundir::path(dir, rundir::kSummary), warnings)
                            .value_or(rundir::Summary{}));
  }
  const std::vector<rundir::StepRow> merged = rundir::merge_rank_steps(rows);
  {
    rundir::StepsWriter steps(rundir::path(top_dir, rundir::kSteps));
    for (const rundir::StepRow& row : merged) steps.write(row);
  }
  if (!evals.empty()) {
    rundir::EvalWriter eval(rundir::path(top_dir, rundir::kEval));
    for (const rundir::EvalRow& row : evals) eval.write(row);
  }
  rundir::Summary s = summaries.front();
  s.run_dir = top_dir;
  apply_global(s, merged, summaries, samples_per_step);
  distributed.figures_scope = kFiguresScope;
  for (int r = 0; r < world_size; ++r) {
    distributed.ranks.push_back(rundir::rank_figures(r, summaries[static_cast<size_t>(r)]));
  }
  if (distributed.comm && distributed.comm->straggler) {
    const int64_t straggler = distributed.comm->straggler->rank;
    std::stable_partition(distributed.ranks.begin(), distributed.ranks.end(),
                          [&](const rundir::RankFigures& f) { return f.rank == straggler; });
  }
  s.distributed = std::move(distributed);
  rundir::write_summary(rundir::path(top_dir, rundir::kSummary), s);
  return s;
}

}  // namespace llmprof::dist
