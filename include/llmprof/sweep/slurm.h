// The Slurm launcher of llmprof sweep: the `launcher` and `slurm` keys of a config file's sweep
// section, and one submission: a job array with a task per point still to run (each task runs
// `llmprof sweep run-point <sweep dir> --index $SLURM_ARRAY_TASK_ID`) and a job that runs
// `llmprof report` and `llmprof plot` on the sweep after it (--dependency=afterany).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"

namespace llmprof::sweep {

struct SweepOptions;

// The sweep.slurm keys: sbatch's options for every task (and, where they apply, the report job).
struct SlurmSettings {
  std::string partition;              // --partition; "" = the cluster's default
  std::string time;                   // --time, e.g. "00:30:00"; "" = the partition's default
  int64_t cpus_per_task = 1;          // --cpus-per-task: the threads of each point
  std::string mem;                    // --mem, e.g. "4G"; "" = the partition's default
  std::string gres;                   // --gres, e.g. "gpu:1"; "" = none
  int64_t max_concurrent_tasks = 0;   // the array's %K; 0 = no limit (--jobs overrides)
  std::vector<std::string> extra_args;  // more sbatch arguments, e.g. --account=proj
};

// The launcher keys of the sweep section.
struct LaunchSettings {
  config::Launcher launcher = config::Launcher::kLocal;  // sweep.launcher
  SlurmSettings slurm;                                    // sweep.slurm
};

// The sweep.launcher and sweep.slurm keys of config_path (defaults where absent). Throws
// ConfigError naming the file, line and key.
LaunchSettings read_launch_section(const std::string& config_path);

// Applies the sweep.launcher and sweep.slurm.* entries of overrides (`--set
// sweep.slurm.partition=debug`; values read as YAML, so `[--account=x]` is a list) over settings
// and removes them from overrides: the rest configure each point's run. Throws ConfigError naming
// the --set argument for an unknown sweep key or a bad value, and pointing to --grid for
// sweep.grid.
void apply_launch_sets(LaunchSettings& settings, std::vector<std::string>& overrides);

// The keys of the sweep section, documented as `llmprof config keys` lists run keys.
std::vector<config::KeyInfo> sweep_section_keys();

// What a Slurm submission did.
struct SlurmSubmission {
  std::string sweep_dir;
  int64_t points = 0;           // grid points x repeats
  int64_t done = 0;             // completed or diverged already: not submitted
  int64_t running = 0;          // held by a task of an earlier submission: not submitted
  std::vector<int64_t> to_run;  // 0-based point indices submitted as array tasks
  std::string array_spec;       // --array=..., e.g. "0-3%2"
  std::string array_job_id;     // "" when nothing was submitted
  std::string report_job_id;
  std::string array_script;     // <sweep>/slurm/array.sbatch
  std::string report_script;    // <sweep>/slurm/report.sbatch
  std::string logs;             // <sweep>/slurm/logs/%A_%a.out
};

// Plans the sweep as the local launcher does (same points, directories and shared peak), writes
// the sbatch scripts and submits them; returns without waiting. Submits nothing when every point
// is done or running. Throws UsageError / ConfigError for bad input (exit 2), Error when sbatch
// is missing or refuses the job (its message in the error; when it refuses the array, sweep.json
// says submit_failed). Warnings (a sweep directory under /tmp) are logged as they are found.
SlurmSubmission submit_sweep(const SweepOptions& opts, const SlurmSettings& slurm);

// What squeue says about the jobs of the sweep's submissions (<sweep>/slurm/submissions.csv),
// one line per job or task; a line saying why when squeue is missing or fails; empty for a
// sweep never submitted to Slurm.
std::vector<std::string> slurm_queue_lines(const std::string& sweep_dir);

}  // namespace llmprof::sweep
