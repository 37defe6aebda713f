// llmprof sweep run-point: the one way a point runs, under either launcher. Claim the point (its
// lock), skip it if a run of the same config finished, move an unfinished earlier attempt aside,
// record "running", run `llmprof train` and record the outcome; then refresh sweep.csv/json.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/process/child.h"
#include "llmprof/rundir/files.h"
#include "llmprof/sweep/sweep.h"
#include "locks.h"
#include "plan.h"
#include "record.h"

namespace llmprof::sweep {
namespace {

namespace fs = std::filesystem;

// How long a claim retries a held point lock: long enough to ride out a status probe's.
constexpr double kClaimWait_s = 3;

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// Moves what an unfinished earlier attempt left (run directory, log, record) to
// <id>.attempt<N>[.log|.point.json], N the first free number; returns the new paths. Never
// deletes or overwrites.
std::vector<std::string> move_aside(const Plan& plan, const Point& p) {
  const std::string run_dir = plan.runs_dir + "/" + p.id;
  const std::vector<std::pair<std::string, std::string>> items = {
      {run_dir, ""},
      {rundir::run_log_path(run_dir), std::string(rundir::kRunLogSuffix)},
      {record_path(plan, p), std::string(rundir::kPointRecordSuffix)}};
  std::error_code ec;
  bool any = false;
  for (const auto& item : items) any = any || fs::exists(item.first, ec);
  if (!any) return {};
  int n = 1;
  auto attempt = [&](int k) { return fmt::format("{}/{}.attempt{}", plan.runs_dir, p.id, k); };
  auto taken = [&](int k) {
    for (const auto& item : items) {
      if (fs::exists(attempt(k) + item.second, ec)) return true;
    }
    return false;
  };
  while (taken(n)) ++n;
  std::vector<std::string> moved;
  for (const auto& [from, suffix] : items) {
    if (!fs::exists(from, ec)) continue;
    const std::string to = attempt(n) + suffix;
    fs::rename(from, to, ec);
    if (ec) throw IoError("cannot move '" + from + "' aside to '" + to + "': " + ec.message());
    moved.push_back(to);
  }
  return moved;
}

// Runs p's `llmprof train` (in this process group, so a Ctrl-C or Slurm's signal reaches it
// directly) and waits for it; the result as its wait status and summary.json say.
PointResult run_train(const Plan& plan, const Point& p, const PointResult& started) {
  std::vector<std::string> argv{plan.executable, "train", "--config", plan.info.base_config};
  const int64_t nproc = point_nproc(p);
  if (nproc > 1 && plan.info.launcher == config::Launcher::kSlurm) {
    // The point's job holds nproc tasks (array.sbatch); each srun task is one rank.
    const std::string srun = process::find_program("srun");
    if (srun.empty()) throw IoError("point " + p.id + ": srun not found on PATH (nproc > 1)");
    argv.insert(argv.begin(), {srun, "--ntasks", std::to_string(nproc), "--kill-on-bad-exit=1"});
  } else if (nproc > 1) {
    argv.insert(argv.end(), {"--nproc", std::to_string(nproc)});
  }
  for (const std::string& s : point_sets(plan, p)) argv.insert(argv.end(), {"--set", s});
  argv.push_back("--quiet");
  process::StopSignals signals;  // a stop signal reaches train too: wait for it to record its end
  const auto t0 = std::chrono::steady_clock::now();
  process::ChildSpec child;
  child.argv = argv;
  child.name = "a point process";
  child.output = process::Output::kLog;
  child.log_path = started.log_path;
  const int wait_status = process::wait_exit(process::spawn(child).pid);
  PointResult r = finished_result(plan.runs_dir + "/" + p.id, started.log_path, wait_status);
  r.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.host = started.host;
  r.slurm_job_id = started.slurm_job_id;
  r.slurm_task_id = started.slurm_task_id;
  r.start_time = started.start_time;
  r.invocation = started.invocation;
  r.moved_aside = started.moved_aside;
  r.end_time = output::local_time_now("%Y-%m-%dT%H:%M:%S%z");
  return r;
}

}  // namespace

PointRunOutcome run_point(const std::string& sweep_dir, int64_t index) {
  Plan plan = read_plan(sweep_dir);
  const auto n = static_cast<int64_t>(plan.points.size());
  if (index < 0 || index >= n) {
    throw UsageError(fmt::format("--index {}: the sweep in '{}' has points 0 to {}", index,
                                 sweep_dir, n - 1));
  }
  const Point& p = plan.points[static_cast<size_t>(index)];
  // Relative paths of the config (data, tokenizer) mean what they meant where the sweep started.
  std::error_code ec;
  fs::current_path(plan.info.workdir, ec);
  if (ec) spdlog::warn("cannot enter the sweep's working directory '{}': {}", plan.info.workdir,
                       ec.message());
  PointRunOutcome out;
  out.point_id = p.id;
  out.log_path = rundir::run_log_path(plan.runs_dir + "/" + p.id);
  // Inherited by train: if this process dies first, the point stays claimed until train exits.
  detail::FileLock claim(point_lock_path(plan, p), kClaimWait_s, /*inherit=*/true);
  if (!claim.locked()) {
    std::optional<PointResult> rec = read_record(plan, p);
    out.status = config::PointStatus::kSkipped;
    out.message = rec ? fmt::format("another task runs it (host {}, Slurm job {} task {}, since {})",
                                    rec->host, rec->slurm_job_id.empty() ? "-" : rec->slurm_job_id,
                                    rec->slurm_task_id.empty() ? "-" : rec->slurm_task_id,
                                    rec->start_time)
                      : "another task runs it";
    return out;
  }
  if (std::optional<PointResult> done = finished_run(plan, p, /*warn_if_changed=*/true)) {
    out.status = config::PointStatus::kSkipped;
    out.message = fmt::format("already {} ({})", config::name(done->status), done->run_dir);
    refresh_tables(plan);
    return out;
  }
  PointResult started;
  started.status = config::PointStatus::kRunning;
  started.moved_aside = move_aside(plan, p);
  started.log_path = out.log_path;
  started.host = detail::host_name();
  started.slurm_job_id = env_or_empty("SLURM_ARRAY_JOB_ID");
  if (started.slurm_job_id.empty()) started.slurm_job_id = env_or_empty("SLURM_JOB_ID");
  started.slurm_task_id = env_or_empty("SLURM_ARRAY_TASK_ID");
  started.start_time = output::local_time_now("%Y-%m-%dT%H:%M:%S%z");
  started.invocation = plan.info.invocation;
  write_record(plan, p, started);
  refresh_tables(plan);
  spdlog::info("{}: running on {}{}; log {}", p.id, started.host,
               started.slurm_job_id.empty()
                   ? ""
                   : fmt::format(" (Slurm job {} task {})", started.slurm_job_id,
                                 started.slurm_task_id.empty() ? "-" : started.slurm_task_id),
               out.log_path);
  PointResult r = run_train(plan, p, started);
  write_record(plan, p, r);
  refresh_tables(plan);
  out.status = r.status;
  out.message = r.message;
  out.exit_code = r.exit_code;
  out.duration_s = r.duration_s.value_or(0);
  return out;
}

}  // namespace llmprof::sweep
