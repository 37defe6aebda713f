#include "record.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "process.h"

namespace llmprof::sweep {
namespace {

using nlohmann::json;

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string text_at(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

template <typename T>
std::optional<T> number_at(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<T>();
}

}  // namespace

std::string record_path(const Plan& plan, const Point& p) {
  return plan.runs_dir + "/" + p.id + std::string(rundir::kPointRecordSuffix);
}

std::string point_lock_path(const Plan& plan, const Point& p) {
  return plan.runs_dir + "/" + p.id + std::string(rundir::kPointLockSuffix);
}

void write_record(const Plan& plan, const Point& p, const PointResult& r) {
  nlohmann::ordered_json j;
  j["schema_version"] = rundir::kSweepSchemaVersion;
  j["id"] = p.id;
  j["status"] = std::string(config::name(r.status));
  j["exit_code"] = or_null(r.exit_code);
  j["signal"] = or_null(r.signal);
  j["message"] = r.message;
  j["run_dir"] = r.run_dir;
  j["log"] = r.log_path;
  j["host"] = r.host;
  j["slurm_job_id"] = r.slurm_job_id;
  j["slurm_task_id"] = r.slurm_task_id;
  j["start_time"] = r.start_time;
  j["end_time"] = r.end_time;
  j["duration_s"] = or_null(r.duration_s);
  j["invocation"] = r.invocation;
  j["moved_aside"] = r.moved_aside;
  output::write_file_atomic(record_path(plan, p), j.dump(2) + "\n");
}

std::optional<PointResult> read_record(const Plan& plan, const Point& p) {
  std::ifstream in(record_path(plan, p), std::ios::binary);
  if (!in) return std::nullopt;
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || text_at(j, "status").empty()) return std::nullopt;
  PointResult r;
  r.status =
      rundir::parse_name<config::PointStatus>(text_at(j, "status"), record_path(plan, p), "status");
  r.exit_code = number_at<int>(j, "exit_code");
  r.signal = number_at<int>(j, "signal");
  r.message = text_at(j, "message");
  r.run_dir = text_at(j, "run_dir");
  r.log_path = text_at(j, "log");
  r.host = text_at(j, "host");
  r.slurm_job_id = text_at(j, "slurm_job_id");
  r.slurm_task_id = text_at(j, "slurm_task_id");
  r.start_time = text_at(j, "start_time");
  r.end_time = text_at(j, "end_time");
  r.duration_s = number_at<double>(j, "duration_s");
  r.invocation = text_at(j, "invocation");
  if (j.contains("moved_aside") && j["moved_aside"].is_array()) {
    for (const json& m : j["moved_aside"]) {
      if (m.is_string()) r.moved_aside.push_back(m.get<std::string>());
    }
  }
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
  SweepInfo info = plan.info;
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
