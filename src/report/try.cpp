#include "llmprof/report/try.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "llmprof/base/numbers.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"

namespace llmprof::report {

namespace {

// The key of "key=value".
std::string key_of(const std::string& set) { return set.substr(0, set.find('=')); }

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

int64_t config_steps(const Run& run, const std::string& key, int64_t fallback) {
  const auto v = run.config_number(key);
  const std::optional<int64_t> whole = v ? truncated_int64(*v) : std::nullopt;
  return whole.value_or(fallback);
}

// What both arms share: the same steps, no evals, no checkpoint, unless the set is about one.
std::vector<std::string> common_sets(const std::string& set, int64_t steps, bool wall) {
  const std::string key = key_of(set);
  std::vector<std::string> out;
  if (key != "schedule.max_steps") out.push_back(fmt::format("schedule.max_steps={}", steps));
  if (!wall && !starts_with(key, "train.eval")) out.push_back("train.eval_interval=0");
  if (key != "train.save_checkpoint") out.push_back("train.save_checkpoint=false");
  return out;
}

}  // namespace

int64_t try_steps(const Run& run, std::optional<int64_t> wanted) {
  const int64_t warmup = std::max<int64_t>(0, config_steps(run, "profile.warmup_steps", 0));
  if (wanted) {
    if (*wanted < warmup + kTryStepsAfterWarmup) {
      throw UsageError(fmt::format(
          "--try-steps {}: the run's profile.warmup_steps = {} leaves fewer than {} measured "
          "steps; give at least {}",
          *wanted, warmup, kTryStepsAfterWarmup, warmup + kTryStepsAfterWarmup));
    }
    return *wanted;
  }
  int64_t steps = config_steps(run, "schedule.max_steps", run.summary_max_steps.value_or(0));
  if (steps <= 0) steps = static_cast<int64_t>(run.steps.size());
  return std::max(std::min(steps, kDefaultTryMaxSteps), warmup + kTryStepsAfterWarmup);
}

std::vector<PlannedTry> plan_tries(const Run& run,
                                   const std::vector<Finding>& findings,
                                   const TryOptions& options) {
  const std::string config = rundir::path(run.dir, rundir::kConfig);
  if (!std::filesystem::exists(config)) {
    throw DataError(config + ": missing: --try trains the run's own config");
  }
  const int64_t steps = try_steps(run, options.steps);
  std::vector<PlannedTry> out;
  for (const Finding& f : findings) {
    for (const std::string& set : f.sets) {
      auto it =
          std::find_if(out.begin(), out.end(), [&](const PlannedTry& p) { return p.set == set; });
      if (it == out.end()) {
        out.push_back({set, {}, {}, steps});
        it = out.end() - 1;
      }
      if (std::find(it->rules.begin(), it->rules.end(), f.rule) == it->rules.end()) {
        it->rules.push_back(f.rule);
      }
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    PlannedTry& p = out[i];
    const bool wall = starts_with(key_of(p.set), "train.eval") ||
                      std::find(p.rules.begin(), p.rules.end(), "eval_share") != p.rules.end();
    p.trial.executable = options.executable;
    p.trial.config_path = config;
    p.trial.common_sets = common_sets(p.set, steps, wall);
    p.trial.candidate_sets = {p.set};
    p.trial.tag = fmt::format("try{}", i + 1);
    p.trial.figure = wall ? ab::Figure::kWallUsPerToken : ab::Figure::kStepUsPerToken;
  }
  return out;
}

TriedSet tried_of(const PlannedTry& planned,
                  const ab::AbResult& result,
                  const std::string& time,
                  const std::string& command) {
  TriedSet t = untried_of(planned, "", time, command);
  t.baseline = result.baseline;
  t.candidate = result.candidate;
  t.comparison = result.comparison;
  return t;
}

TriedSet untried_of(const PlannedTry& planned,
                    const std::string& why,
                    const std::string& time,
                    const std::string& command) {
  TriedSet t;
  t.set = planned.set;
  t.rules = planned.rules;
  t.figure = planned.trial.figure;
  t.steps = planned.steps;
  t.error = why;
  t.time = time;
  t.command = command;
  return t;
}

}  // namespace llmprof::report
