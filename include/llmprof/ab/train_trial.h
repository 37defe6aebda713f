// A repetition as a short `llmprof train`: one config, --set overrides common to both arms and
// the candidate's own, written into a scratch directory, measured from its run directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/ab/ab.h"
#include "llmprof/config/enums.h"
#include "llmprof/error.h"

namespace llmprof::ab {

// The figure a repetition is measured by; lower is better: a time, or energy per token.
enum class Figure : int {
  kMedianStepMs = 0,    // summary.json timing.step_ms median (steps after warm-up)
  kStepUsPerToken = 1,  // 1e6 / summary.json throughput tokens_per_s median: batch-size fair
  kWallUsPerToken = 2,  // (sum of steps.csv step_ms + eval_ms) / sum of tokens, every step
  // 1 / summary.json energy.tokens_per_j: the run's energy (every sensor counted in its total,
  // over the run's wall time) per token of every step; a run without energy has no figure.
  kEnergyJPerToken = 3,
};

}  // namespace llmprof::ab

namespace llmprof::config {
LLMPROF_ENUM_NAMES(ab::Figure,
                   "figure",
                   "median_step_ms",
                   "step_us_per_token",
                   "wall_us_per_token",
                   "energy_j_per_token");
}  // namespace llmprof::config

namespace llmprof::ab {

// "median_step_ms" | "step_us_per_token" | "wall_us_per_token" | "energy_j_per_token": stable
// names for files.
inline std::string_view figure_name(Figure figure) {
  const std::string_view name = config::name(figure);
  return name == "?" ? "wall_us_per_token" : name;  // "?": a cast outside the table
}

// The figure a name stands for; nullopt for any other text.
inline std::optional<Figure> parse_figure(std::string_view name) {
  return config::find_enum<Figure>(name);
}

// The figure of a finished run directory. Throws DataError naming the file when the run did not
// complete or the figure is not in it.
double read_figure(const std::string& run_dir, Figure figure);

// A repetition that failed: which arm, so a caller can tell a refused candidate from a baseline
// that does not run at all.
class RepetitionError : public Error {
 public:
  RepetitionError(const std::string& what, Arm arm) : Error(what), arm_(arm) {}
  Arm arm() const { return arm_; }

 private:
  Arm arm_;
};

struct TrainTrial {
  std::string executable;                   // the llmprof executable
  std::string config_path;                  // e.g. a run's config.yaml
  std::vector<std::string> common_sets;     // key=value for both arms (e.g. schedule.max_steps)
  std::vector<std::string> candidate_sets;  // key=value for the candidate only
  std::string scratch_dir;                  // repetitions write here
  std::string tag;  // names the repetitions: <scratch_dir>/<tag>-<arm>-<round>[.log]
  Figure figure = Figure::kMedianStepMs;
  // Rank processes per repetition: above 1, `train --nproc N` (a data-parallel run's world size),
  // measured from the repetition's top directory.
  int64_t nproc = 1;
};

// The command line of one repetition: train --config, the common sets, the candidate's sets (for
// the candidate), output.dir and output.name into the scratch directory, --quiet, and --nproc N
// when the trial has more than one rank.
std::vector<std::string> train_argv(const TrainTrial& trial, Arm arm, int64_t round);

// The rank processes a finished run directory shows: 1 without rank0/; else the number of
// rank0/, rank1/, ... whose summary.json names that rank of the world size the top summary.json
// gives. Throws DataError naming the directory or file that breaks the sequence.
int64_t trained_ranks(const std::string& run_dir);

// Runs one repetition and measures it. Throws RepetitionError naming the arm, round, exit and log
// when train fails (its last log line says why), its figure cannot be read or it trained another
// number of rank processes than trial.nproc; Interrupted when a signal stopped it.
Repetition run_train_repetition(const TrainTrial& trial, Arm arm, int64_t round);

// Runs argv (argv[0] a path) as one repetition that writes the run directory run_dir, its log to
// run_dir + ".log"; measured by figure when given (figure 0 otherwise). Throws as
// run_train_repetition does.
Repetition run_argv_repetition(const std::vector<std::string>& argv,
                               const std::string& run_dir,
                               Arm arm,
                               int64_t round,
                               std::optional<Figure> figure);

// A new, empty directory <system temp>/llmprof-ab-XXXXXX. Throws IoError.
std::string make_scratch_dir();

}  // namespace llmprof::ab
