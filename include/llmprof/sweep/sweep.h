// llmprof sweep: runs `llmprof train` once per grid point, each as its own process, and gathers
// their summaries into <sweep dir>/sweep.csv and sweep.json. Resumable: a re-run of the same
// command skips points already completed (or diverged) and runs the rest again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  bool stopped = false;     // the sweep itself got SIGINT/SIGTERM and launched no more points
};

// Runs or resumes the sweep. Usage and config errors throw UsageError/ConfigError before any
// point runs; a point's failure is in the outcome (and sweep.csv), not thrown.
SweepOutcome run_sweep(const SweepOptions& opts);

}  // namespace llmprof::sweep
