#include "llmprof/rundir/comm_ranks.h"

#include <map>

#include "llmprof/base/stats.h"

namespace llmprof::rundir {

std::vector<CommRankFigures> comm_rank_figures(const std::vector<CommStepRow>& steps) {
  std::map<int64_t, std::vector<const CommStepRow*>> by_rank;
  for (const CommStepRow* r : steady_steps(steps)) by_rank[r->rank].push_back(r);
  std::vector<CommRankFigures> out;
  for (const auto& [rank, rows] : by_rank) {
    CommRankFigures f;
    f.rank = rank;
    f.steps = static_cast<int64_t>(rows.size());
    double last = 0, buckets = 0;
    std::vector<double> lag, data, fwd, bwd, opt, step;
    for (const CommStepRow* r : rows) {
      last += static_cast<double>(r->last_launches);
      buckets += static_cast<double>(r->buckets);
      if (r->launch_lag_ms) lag.push_back(*r->launch_lag_ms);
      data.push_back(r->data_ms);
      fwd.push_back(r->forward_ms);
      bwd.push_back(r->backward_compute_ms);
      opt.push_back(r->optimizer_ms);
      step.push_back(r->step_ms);
    }
    if (buckets > 0) f.launched_last_share = last / buckets;
    f.launch_lag_ms = median(lag);
    f.data_ms = median(data);
    f.forward_ms = median(fwd);
    f.backward_compute_ms = median(bwd);
    f.optimizer_ms = median(opt);
    f.step_ms = median(step);
    out.push_back(f);
  }
  return out;
}

std::optional<int64_t> straggler_rank(const std::vector<CommRankFigures>& ranks) {
  if (ranks.size() < 2) return std::nullopt;
  const CommRankFigures* best = nullptr;
  for (const CommRankFigures& r : ranks) {
    if (r.launch_lag_ms && (!best || *r.launch_lag_ms > *best->launch_lag_ms)) best = &r;
  }
  if (best == nullptr) return std::nullopt;
  return best->rank;
}

}  // namespace llmprof::rundir
