// llmprof sweep: runs `llmprof train` once per grid point, each as its own process, and gathers
// their summaries into <sweep dir>/sweep.csv and sweep.json. Resumable: a re-run of the same
// command skips points already completed (or diverged) and runs the rest again. Both launchers,
// local (run_sweep) and Slurm (llmprof/sweep/slurm.h), run each point through run_point.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::config {
struct Config;
}

namespace llmprof::sweep {

// What `llmprof sweep` was asked to do.
struct SweepOptions {
  std::string config_path;                // base config (its `sweep:` section may hold a grid)
  std::vector<std::string> grid_args;     // --grid key=v1,v2,... (replace same-named file keys)
  std::vector<std::string> overrides;     // --set key=value, applied to every point
  int64_t repeat = 1;                     // runs per grid point
  int64_t jobs = 1;                       // points run at once; clamped to the cores
  std::string out_dir;                    // parent of the sweep dir; empty = base output.dir
  std::string name;                       // sweep dir name; empty = sweep-<config stem>
  bool quiet = false;                     // no progress; warnings and errors only
  std::vector<std::string> command_line;  // recorded in sweep.json
  std::string executable;                 // llmprof to run points with; empty = /proc/self/exe
  bool jobs_given = false;                // --jobs on the command line (the Slurm array's %K)
  std::vector<std::string> slurm_args;    // --slurm-arg: more sbatch arguments (both jobs)
  // --plan: given a point's config, why it will not fit ("" when it fits). Points with a reason
  // are recorded skipped with it and not run; every point is checked before any runs (its
  // errors, e.g. a config the planner cannot plan, are thrown then). Empty: no check.
  std::function<std::string(const config::Config&)> fits_check;
};

// What a sweep came to, for the caller to report (`llmprof sweep` prints it and picks the exit
// code: 130 when stopped, 1 when a point failed or was interrupted, else 0).
struct SweepOutcome {
  std::string sweep_dir;
  int64_t points = 0;       // grid points x repeats
  int64_t completed = 0;
  int64_t diverged = 0;
  int64_t failed = 0;
  int64_t interrupted = 0;  // point runs stopped by a signal
  int64_t not_run = 0;      // still pending when the sweep was stopped
  int64_t reused = 0;       // completed or diverged runs kept from an earlier invocation
  int64_t skipped = 0;      // --plan: predicted not to fit, not run
  bool stopped = false;     // the sweep itself got SIGINT/SIGTERM and launched no more points
};

// What `llmprof sweep run-point` did with its point.
struct PointRunOutcome {
  std::string point_id;
  config::PointStatus status = config::PointStatus::kSkipped;  // a run's status, or skipped
  std::string message;    // why skipped, failed or interrupted
  std::optional<int> exit_code;  // of the point's train process; none when skipped
  double duration_s = 0;
  std::string log_path;   // runs/<id>.log
};

// Runs point `index` (0-based, plan order: a Slurm array task id) of the sweep in sweep_dir: claims
// it (runs/<id>.lock; "skipped" when another task holds it or a run of the same config finished),
// moves an unfinished earlier attempt aside, records status, host, Slurm job and task, start and
// end in runs/<id>.point.json, and refreshes sweep.csv/sweep.json. Throws DataError when
// sweep_dir holds no plan.json, UsageError for an index out of range.
PointRunOutcome run_point(const std::string& sweep_dir, int64_t index);

// One point as `llmprof sweep status` shows it.
struct PointState {
  std::string id;
  config::PointStatus status = config::PointStatus::kPending;
  std::string host, slurm_job_id, slurm_task_id, start_time, end_time, message;
};

// Where a sweep stands, from its directory alone (plan.json and the point records).
struct SweepStatus {
  std::string sweep_dir;
  std::string launcher;  // local | slurm
  config::SweepState state = config::SweepState::kRunning;  // sweep.json's status
  std::string state_note;  // why, for submit_failed (sbatch's message); "" otherwise
  int64_t points = 0, pending = 0, running = 0, completed = 0, diverged = 0, failed = 0,
          interrupted = 0;
  std::vector<PointState> states;  // plan order
  std::string progress;            // "3/4 done, 1 failed; running p004-..."
};

// Reads the sweep's state and brings sweep.csv/sweep.json up to date with it (a point whose task
// died without a word shows as interrupted). Throws DataError when sweep_dir holds no plan.json.
SweepStatus sweep_status(const std::string& sweep_dir);

// Runs or resumes the sweep. Usage and config errors throw UsageError/ConfigError before any
// point runs; a point's failure is in the outcome (and sweep.csv), not thrown.
// Each point runs as `llmprof sweep run-point` (opts.executable).
SweepOutcome run_sweep(const SweepOptions& opts);

}  // namespace llmprof::sweep
