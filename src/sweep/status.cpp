// llmprof sweep status: where a sweep stands, from plan.json and the point records alone, so it
// works the same for a local sweep and for a Slurm array whose tasks ran on other nodes.
#include <fmt/format.h>

#include "llmprof/error.h"
#include "llmprof/sweep/sweep.h"
#include "plan.h"
#include "progress.h"
#include "record.h"

namespace llmprof::sweep {

SweepStatus sweep_status(const std::string& sweep_dir) {
  const Plan plan = read_plan(sweep_dir);
  std::vector<PointResult> results;
  try {
    results = refresh_tables(plan);
  } catch (const IoError&) {  // a read-only view of someone else's sweep: report, write nothing
    results = current_results(plan);
  }
  SweepStatus st;
  st.sweep_dir = plan.info.sweep_dir;
  st.launcher = std::string(config::name(plan.info.launcher));
  st.state = plan.info.status;
  st.state_note = plan.info.status_note;
  st.points = static_cast<int64_t>(plan.points.size());
  std::vector<std::string> running;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const PointResult& r = results[i];
    st.pending += r.status == config::PointStatus::kPending;
    st.running += r.status == config::PointStatus::kRunning;
    st.completed += r.status == config::PointStatus::kCompleted;
    st.diverged += r.status == config::PointStatus::kDiverged;
    st.failed += r.status == config::PointStatus::kFailed;
    st.interrupted += r.status == config::PointStatus::kInterrupted;
    if (r.status == config::PointStatus::kRunning) running.push_back(plan.points[i].id);
    st.states.push_back({plan.points[i].id, r.status, r.host, r.slurm_job_id, r.slurm_task_id,
                         r.start_time, r.end_time, r.message});
  }
  st.progress = detail::progress_text(count_points(results), st.points, running, std::nullopt);
  const std::string no_eta = "; ETA ?";  // status knows no durations to estimate from
  if (st.progress.size() >= no_eta.size() &&
      st.progress.compare(st.progress.size() - no_eta.size(), no_eta.size(), no_eta) == 0) {
    st.progress.resize(st.progress.size() - no_eta.size());
  }
  return st;
}

}  // namespace llmprof::sweep
