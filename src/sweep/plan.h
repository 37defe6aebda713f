// A sweep's plan: its context, points and each point's `llmprof train` settings, decided once by
// the launcher (local or Slurm) and kept in <sweep>/plan.json, from which `llmprof sweep
// run-point` and `llmprof sweep status` work with the sweep directory alone. Private to src/sweep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/sweep/grid.h"
#include "results.h"

namespace llmprof::sweep {

struct SweepOptions;

struct Plan {
  rundir::SweepContext info;  // plan.json's and sweep.json's context
  std::vector<Point> points;
  std::string runs_dir;      // <sweep>/runs: run directories, logs, records and locks of points
  std::string executable;    // the llmprof that plans, runs points and measures the peak
  bool shared_peak = false;  // the sweep measures one MFU peak for every point (decide_peak)
  config::Precision precision = config::Precision::kFp32;  // of every point, for that measurement
  bool threads_from_env = true;  // SLURM_CPUS_PER_TASK sets a point's threads (none given)
};

// Every check that can fail on user input, before anything runs: the grid, its points, the
// directory name, the --set list. threads_per_point is the split of the local cores over --jobs,
// or cpus_per_task under Slurm (jobs is then the array's concurrency, 0 for no limit).
// Throws UsageError / ConfigError.
Plan make_plan(const SweepOptions& opts,
               config::Launcher launcher,
               int64_t slurm_cpus_per_task,
               int64_t slurm_max_tasks);

// The shared MFU peak: reused from an earlier invocation's sweep.json, else measured now with
// `llmprof peak`. Call with the sweep directory locked.
void share_peak(Plan& plan);

// The --set list of a point's `llmprof train`: the thread split (or SLURM_CPUS_PER_TASK), the
// user's --set, the shared peak, the point's values, where its run goes.
std::vector<std::string> point_sets(const Plan& plan, const Point& p);

// Writes <sweep>/plan.json atomically. Throws IoError.
void write_plan(const Plan& plan);

// Reads <sweep>/plan.json; throws DataError when the directory holds no sweep plan.
Plan read_plan(const std::string& sweep_dir);

// Why the run in run_dir ran with another config than p would now (its first differing line),
// or "" when it is the same.
std::string config_difference(const Plan& plan, const Point& p, const std::string& run_dir);

// The completed or diverged run of p with the same config, when there is one.
std::optional<PointResult> finished_run(const Plan& plan, const Point& p, bool warn_if_changed);

}  // namespace llmprof::sweep
