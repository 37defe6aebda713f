// `llmprof report --try RUN`: each distinct --set of the run's findings as an A/B of short
// trainings of the run's own config.yaml (llmprof/ab), baseline against baseline + the set. This
// plans the A/Bs and turns their results into tried.json entries; the CLI runs them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/ab/ab.h"
#include "llmprof/ab/train_trial.h"
#include "llmprof/report/document.h"
#include "llmprof/report/run.h"
#include "llmprof/report/tried.h"

namespace llmprof::report {

inline constexpr int64_t kDefaultTryRepetitions = 6;  // ab::kMinRepetitions: a 95% interval
inline constexpr int64_t kDefaultTryMaxSteps =
    30;  // steps of a repetition, unless the run had fewer
inline constexpr int64_t kTryStepsAfterWarmup = 3;  // the fewest measured steps of a repetition

struct TryOptions {
  std::optional<int64_t> steps;  // schedule.max_steps of each repetition; default: try_steps
  std::string executable;        // the llmprof executable the repetitions run
};

// How a run's ranks start again for its trials: summary.json's distributed section (world size,
// launcher) and the hosts its ranks' env.json name.
struct TrialRanks {
  int64_t world_size = 1;  // the run's; 1 for a single-process run
  std::string launcher;    // the run's distributed.launcher; "" for a single-process run
  // Why a trial cannot start the run's ranks here (Slurm, several hosts, a rank's own
  // directory); "" when it can: N ranks on this host, `llmprof train --nproc N`.
  std::string untried;
};

// The ranks of the run directory run_dir: one process without a distributed section (or
// summary.json). Throws DataError for a malformed summary.json or env.json.
TrialRanks trial_ranks(const std::string& run_dir);

// One planned A/B.
struct PlannedTry {
  std::string set;                 // key=value
  std::vector<std::string> rules;  // the findings that suggest it
  ab::TrainTrial trial;            // its scratch_dir left for the caller to fill; nproc the run's
  int64_t steps = 0;
  TrialRanks ranks;  // untried set: record the set as not measured, saying why, train nothing
};

// The steps of each repetition: `wanted` when given, else the run's schedule.max_steps up to
// kDefaultTryMaxSteps, at least profile.warmup_steps + kTryStepsAfterWarmup. Throws UsageError when
// `wanted` leaves fewer than kTryStepsAfterWarmup steps after the run's warm-up.
int64_t try_steps(const Run& run, std::optional<int64_t> wanted);

// One A/B per distinct set of the findings, in finding order. Each arm is a fresh short run of the
// run's config with only the trial's keys changed: the same steps, no evals and no checkpoints
// (unless the set is about them), never resuming (train.resume_from) nor starting from the run's
// own checkpoints (a model.init_from inside the run directory); a data-parallel run's trials
// train its world size (TrialRanks). The figure is the step time per token (fair to a larger
// batch), or the wall time per token for evaluation settings. Throws UsageError as try_steps
// does, DataError when the run has no config.yaml.
std::vector<PlannedTry> plan_tries(const Run& run,
                                   const std::vector<Finding>& findings,
                                   const TryOptions& options);

// The tried.json entry of a finished A/B.
TriedSet tried_of(const PlannedTry& planned,
                  const ab::AbResult& result,
                  const std::string& time,
                  const std::string& command);

// The tried.json entry of an A/B that could not be measured (a repetition failed: why).
TriedSet untried_of(const PlannedTry& planned,
                    const std::string& why,
                    const std::string& time,
                    const std::string& command);

}  // namespace llmprof::report
