// What a sweep knows about each point (status, exit, metrics from the point's summary.json) and
// the two files it keeps current in the sweep directory: sweep.csv (one row per point with an
// outcome) and sweep.json (context and every point), both rewritten atomically. Private to sweep.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llmprof/config/enums.h"
#include "llmprof/sweep/grid.h"

namespace llmprof::sweep {

// The outcome of one point, as far as it is known.
struct PointResult {
  config::PointStatus status = config::PointStatus::kPending;
  std::optional<int> exit_code;  // the train process's exit status; 128+N when killed by N
  std::optional<int> signal;     // N when the process was killed by signal N
  std::string message;           // why, when not completed
  std::string run_dir;           // <sweep>/runs/<id>, "" when the run left no directory
  std::string log_path;          // <sweep>/runs/<id>.log
  std::optional<double> duration_s;      // wall time of the train process
  bool reused = false;                   // completed/diverged by an earlier invocation: not re-run
  std::vector<std::string> moved_aside;  // earlier attempts renamed to <id>.attempt<N>[.log]
  // Where and when it ran, from the point record `llmprof sweep run-point` keeps.
  std::string host;
  std::string slurm_job_id;   // SLURM_ARRAY_JOB_ID (else SLURM_JOB_ID); "" outside Slurm
  std::string slurm_task_id;  // SLURM_ARRAY_TASK_ID; "" outside a job array
  std::string start_time;     // ISO 8601, local time with offset
  std::string end_time;       // "" while running
  std::string invocation;     // the launcher invocation that ran it (plan.json's invocation)
  // From summary.json; nullopt where it holds null or nothing.
  std::optional<double> median_step_ms, tokens_per_s, mfu;  // medians over the measured steps
  std::optional<double> final_train_loss, final_val_loss, final_val_perplexity;
  std::optional<int64_t> peak_rss_bytes;
  std::optional<double> energy_j;  // summary energy.total_j, when a run measures energy
  bool energy_estimated = false;   // summary energy.estimated: from energy.cpu_tdp_w, not a sensor
};

// The sweep's context, as sweep.json records it.
struct SweepInfo {
  std::string base_config;
  std::string sweep_dir;
  Grid grid;
  std::vector<std::string> overrides;  // --set, applied to every point
  int64_t repeat = 1;
  int64_t jobs_requested = 1;
  int64_t jobs = 1;         // after clamping to cores
  std::string jobs_policy;  // how --jobs above the core count is handled
  int64_t threads_per_point = 1;  // 0 (null in sweep.json): threads is swept, so it varies
  std::string threads_source;     // where threads_per_point comes from, e.g. "cores / jobs"
  int64_t cores = 1;
  double peak_flops_per_s = 0;  // shared MFU peak passed to every point; 0 = none
  std::string peak_source;
  std::string peak_measured_at;  // ISO 8601 time of the shared measurement; "" when none
  bool peak_reused = false;      // true: taken from sweep.json of an earlier invocation
  std::vector<std::string> command_line;
  std::string start_time;          // ISO 8601, local time with offset
  config::SweepState status = config::SweepState::kRunning;
  std::string status_note;         // why, for submit_failed (sbatch's message); "" otherwise
  std::string launcher = "local";  // config::name(Launcher)
  std::string invocation;          // this launcher invocation: start time and pid
  std::string workdir;             // where points resolve relative paths (the launcher's cwd)
};

// The context half of sweep.json (and of plan.json), from schema_version to resume_policy.
nlohmann::ordered_json info_json(const SweepInfo& info);

// The context read back from plan.json; throws DataError naming the file and the field.
SweepInfo info_from_json(const nlohmann::json& j, const std::string& file);

// True for statuses a re-run keeps: completed, and diverged (an outcome of the config itself).
bool is_final_status(config::PointStatus status);

// Points by outcome; pending and running points are in none.
struct PointCounts {
  int64_t completed = 0, diverged = 0, failed = 0, interrupted = 0;
  // Points with a final outcome (completed or diverged): what "done" counts.
  int64_t done() const { return completed + diverged; }
  // Points with any outcome: the ones nothing is left to wait for.
  int64_t ended() const { return done() + failed + interrupted; }
};

// Counts the results by status.
PointCounts count_points(const std::vector<PointResult>& results);

// Fills status, message and metrics from <run_dir>/summary.json; false when absent or unreadable.
bool read_summary(const std::string& run_dir, PointResult& result);

// The last line of the log that mentions an error (else the last non-empty line), trimmed.
std::string last_error_line(const std::string& log_path);

// The result of a finished process from its wait status, its summary.json when present, else
// "failed" (or "interrupted" for SIGINT/SIGTERM/130) with the exit and the log's last error line.
PointResult finished_result(const std::string& run_dir,
                            const std::string& log_path,
                            int wait_status);

// sweep.csv: the swept keys, repeat, point_id, status, exit_code, metrics, run_dir, then where and
// when it ran (host, slurm_job_id, slurm_task_id, start_time, end_time).
std::string sweep_csv(const Grid& grid,
                      const std::vector<Point>& points,
                      const std::vector<PointResult>& results);

// sweep.json: schema_version, context and every point with its values and outcome.
std::string sweep_json(const SweepInfo& info,
                       const std::vector<Point>& points,
                       const std::vector<PointResult>& results);

// The shared peak an earlier invocation stored in <sweep_dir>/sweep.json.
struct StoredPeak {
  double flops_per_s = 0;
  std::string source;       // how it was measured (peak_source)
  std::string measured_at;  // peak_measured_at
};

// The peak sweep.json holds, or nullopt when the file is absent, unreadable or holds none.
std::optional<StoredPeak> read_stored_peak(const std::string& sweep_dir);

// Writes sweep.csv and sweep.json into info.sweep_dir, each atomically. Throws IoError.
void write_sweep_files(const SweepInfo& info,
                       const std::vector<Point>& points,
                       const std::vector<PointResult>& results);

}  // namespace llmprof::sweep
