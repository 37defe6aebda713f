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

// One planned A/B.
struct PlannedTry {
  std::string set;                 // key=value
  std::vector<std::string> rules;  // the findings that suggest it
  ab::TrainTrial trial;            // its scratch_dir left for the caller to fill
  int64_t steps = 0;
};

// The steps of each repetition: `wanted` when given, else the run's schedule.max_steps up to
// kDefaultTryMaxSteps, at least profile.warmup_steps + kTryStepsAfterWarmup. Throws UsageError when
// `wanted` leaves fewer than kTryStepsAfterWarmup steps after the run's warm-up.
int64_t try_steps(const Run& run, std::optional<int64_t> wanted);

// One A/B per distinct set of the findings, in finding order. Both arms take the same steps, skip
// evals and the final checkpoint (unless the set is about them); the figure is the step time per
// token (fair to a larger batch), or the wall time per token for evaluation settings. Throws
// UsageError as try_steps does, DataError when the run has no config.yaml.
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
