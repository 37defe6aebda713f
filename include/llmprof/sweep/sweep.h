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

// Runs or resumes the sweep; returns 0 when every point completed or diverged, 1 when any
// failed, 130 when interrupted. Usage and config errors throw UsageError/ConfigError (exit 2)
// before any point runs.
int run_sweep(const SweepOptions& opts);

}  // namespace llmprof::sweep
