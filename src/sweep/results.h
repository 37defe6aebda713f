// What a sweep knows about each point (status, exit, metrics from the point's summary.json) and
// the two files it keeps current in the sweep directory: sweep.csv (one row per point with an
// outcome) and sweep.json (context and every point), both rewritten atomically. Private to sweep.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/rundir/sweep_doc.h"
#include "llmprof/sweep/grid.h"

namespace llmprof::sweep {

// The outcome of one point, as far as it is known: what its record says (rundir::PointOutcome:
// status, exit, where and when it ran) and what its summary.json says.
struct PointResult : rundir::PointOutcome {
  bool reused = false;  // completed/diverged by an earlier invocation: not re-run
  // From summary.json; nullopt where it holds null or nothing.
  std::optional<double> median_step_ms, tokens_per_s, mfu;  // medians over the measured steps
  std::optional<double> final_train_loss, final_val_loss, final_val_perplexity;
  std::optional<int64_t> peak_rss_bytes;
  std::optional<double> energy_j;  // summary energy.total_j, when a run measures energy
  bool energy_estimated = false;   // summary energy.estimated: from energy.cpu_tdp_w, not a sensor
  // A data-parallel point's ranks (1 otherwise; tokens_per_s and mfu are then global) and its
  // communication (summary distributed.comm; null for one rank).
  int64_t ranks = 1;
  std::optional<double> exposed_comm_ms, overlap, busbw_gb_per_s;
};

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
std::string sweep_json(const rundir::SweepContext& info,
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
void write_sweep_files(const rundir::SweepContext& info,
                       const std::vector<Point>& points,
                       const std::vector<PointResult>& results);

}  // namespace llmprof::sweep
