// Sweep grids: the swept config keys and their values, from --grid arguments, the `sweep:` section
// of a config file or the default, checked against the base config and expanded into points with
// deterministic ids. Every user error is a ConfigError or UsageError (exit 2) naming key and value.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/rundir/sweep_doc.h"

namespace llmprof::config {
struct Config;
}

namespace llmprof::sweep {

// One swept key and its values (key, values, origin), and one run of the sweep (index, repeat,
// values, id): the types plan.json and sweep.json hold (rundir/sweep_doc.h).
using GridAxis = rundir::GridAxis;
using Grid = std::vector<GridAxis>;
using Point = rundir::PlanPoint;

// The grid key that is no config key: the number of ranks a point trains on (a point with
// nproc = N is a data-parallel job: `llmprof train --nproc N` locally, N Slurm tasks under srun).
inline constexpr const char* kNprocKey = "nproc";

// A point's nproc value (1 when the grid has no nproc axis).
int64_t point_nproc(const Point& p);

// Parses one --grid argument "key=v1,v2,...". Throws UsageError naming the argument.
GridAxis parse_grid_arg(const std::string& arg);

// The axes of the `sweep: {grid: {...}}` section of a YAML or JSON config file (yaml-cpp), empty
// when the file has none. Values are lists, {range: [start, stop, step]} (stop inclusive) or
// {log: [start, stop, count]}. Throws ConfigError naming the file, line and key.
Grid read_sweep_section(const std::string& config_path);

// The grid when none is given: train.batch_size=8,16,32 x optim.lr=1e-4,3e-4,1e-3.
Grid default_grid();

// The file's axes with each same-named --grid axis replacing it in place and new ones appended;
// the default grid when both are empty. Throws UsageError for a key given twice on the CLI.
Grid merge_grids(const Grid& file_grid, const Grid& cli_grid);

// start, start+step, ... up to stop inclusive (integers when all three are). Throws ConfigError.
std::vector<std::string> expand_range(const std::string& start,
                                      const std::string& stop,
                                      const std::string& step);

// count log-spaced values from start to stop inclusive, rounded to 12 significant digits, or to
// whole numbers (duplicates dropped) when integral. Throws ConfigError.
std::vector<std::string> expand_log(double start, double stop, int64_t count, bool integral);

// Checks every key and value against base (config::apply_override) and returns the grid with each
// value in canonical form ("1e-4" -> "0.0001"). Throws ConfigError naming origin, key and value.
Grid resolve_grid(const config::Config& base, const Grid& grid);

// Every combination of the axes (first axis outermost) times repeats (innermost).
std::vector<Point> expand_points(const Grid& grid, int64_t repeats);

// "p003-train.batch_size=16-optim.lr=0.0003-r1": index zero-padded to 3 (or more) digits, then
// the values, then the repeat; characters outside [A-Za-z0-9._=-] become '_'.
std::string point_id(int64_t index,
                     int64_t num_points,
                     const std::vector<std::pair<std::string, std::string>>& values,
                     int64_t repeat);

// Applies each point's values to base and runs config::validate, so cross-key conflicts
// (n_head not dividing n_embd) stop the sweep before it starts. Throws ConfigError naming the
// point.
void validate_points(const config::Config& base, const std::vector<Point>& points);

}  // namespace llmprof::sweep
