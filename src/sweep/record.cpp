#include "record.h"

#include <fmt/format.h>

#include <filesystem>

#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/sweep_doc.h"
#include "locks.h"

namespace llmprof::sweep {
std::string record_path(const Plan& plan, const Point& p) {
  return plan.runs_dir + "/" + p.id + std::string(rundir::kPointRecordSuffix);
}

std::string point_lock_path(const Plan& plan, const Point& p) {
  return plan.runs_dir + "/" + p.id + std::string(rundir::kPointLockSuffix);
}

void write_record(const Plan& plan, const Point& p, const PointResult& r) {
  rundir::PointRecord record;
  record.id = p.id;
  record.outcome = r;
  rundir::write_point_record(record_path(plan, p), record);
}

std::optional<PointResult> read_record(const Plan& plan, const Point& p) {
  const std::string path = record_path(plan, p);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  PointResult r;
  static_cast<rundir::PointOutcome&>(r) = rundir::read_point_record(path).outcome;
  return r;
}

PointResult current_result(const Plan& plan, const Point& p) {
  std::optional<PointResult> record = read_record(plan, p);
  if (!record) {
    std::optional<PointResult> done = finished_run(plan, p, /*warn_if_changed=*/false);
    PointResult r = done ? *done : PointResult{};
    if (!done) r.log_path = rundir::run_log_path(plan.runs_dir + "/" + p.id);
    r.reused = done.has_value();
    return r;
  }
  PointResult r = *record;
  if (r.status == config::PointStatus::kRunning && !detail::is_locked(point_lock_path(plan, p))) {
    PointResult from_summary = r;
    const std::string run_dir = plan.runs_dir + "/" + p.id;
    if (read_summary(run_dir, from_summary) && is_final_status(from_summary.status)) {
      r.status = from_summary.status;  // train finished; the task died before it could record it
      r.run_dir = run_dir;
    } else {
      r.status = config::PointStatus::kInterrupted;
      r.message =
          "its task ended without recording an outcome (killed, cancelled past KillWait, or its "
          "node went down)";
    }
  }
  if (!r.run_dir.empty() && r.status != config::PointStatus::kRunning) {
    read_summary(r.run_dir, r);  // metrics, and the status train wrote, where it wrote one
  }
  // train exits 0 when completed, 1 when diverged (what a reused point's row says too).
  if (is_final_status(r.status)) {
    r.exit_code = r.status == config::PointStatus::kCompleted ? kExitOk : kExitRuntime;
  }
  r.reused = is_final_status(r.status) && r.invocation != plan.info.invocation;
  return r;
}

std::vector<PointResult> current_results(const Plan& plan) {
  std::vector<PointResult> results;
  results.reserve(plan.points.size());
  for (const Point& p : plan.points) results.push_back(current_result(plan, p));
  return results;
}

std::vector<PointResult> refresh_tables(const Plan& plan) {
  detail::FileLock lock(rundir::path(plan.info.sweep_dir, rundir::kSweepTablesLock),
                        /*wait_s=*/-1, /*inherit=*/false);
  std::vector<PointResult> results = current_results(plan);
  rundir::SweepContext info = plan.info;
  const PointCounts counts = count_points(results);
  if ((info.status == config::SweepState::kRunning ||
       info.status == config::SweepState::kSubmitted) &&
      counts.ended() == static_cast<int64_t>(results.size())) {
    info.status = config::SweepState::kFinished;
  }
  write_sweep_files(info, plan.points, results);
  return results;
}

}  // namespace llmprof::sweep
