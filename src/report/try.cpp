#include "llmprof/report/try.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "llmprof/base/numbers.h"
#include "llmprof/error.h"
#include "llmprof/rundir/env.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::report {

namespace {

namespace fs = std::filesystem;

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

std::string config_text(const Run& run, const std::string& key) {
  const auto it = run.config.find(key);
  return it == run.config.end() ? std::string() : it->second;
}

// Whether path is dir or lies inside it (both as they resolve from here).
bool inside(const std::string& path, const std::string& dir) {
  std::error_code ec_path, ec_dir;
  const fs::path p = fs::weakly_canonical(path, ec_path);
  const fs::path d = fs::weakly_canonical(dir, ec_dir);
  if (ec_path || ec_dir) return false;
  const fs::path rel = p.lexically_relative(d);
  return !rel.empty() && *rel.begin() != "..";
}

// What both arms share, to make each a fresh short run of the run's config: the same steps, no
// evals and no checkpoints (unless the set is about them: a checkpoint_interval's trial saves
// checkpoints, which it needs), no resume, no start from the run's own checkpoints.
std::vector<std::string> common_sets(const Run& run,
                                     const std::string& set,
                                     int64_t steps,
                                     bool wall) {
  const std::string key = key_of(set);
  std::vector<std::string> out;
  if (key != "schedule.max_steps") out.push_back(fmt::format("schedule.max_steps={}", steps));
  if (!wall && !starts_with(key, "train.eval")) out.push_back("train.eval_interval=0");
  if (key == "train.checkpoint_interval") {
    out.push_back("train.save_checkpoint=true");
  } else if (key != "train.save_checkpoint") {
    out.push_back("train.save_checkpoint=false");
  }
  if (key != "train.checkpoint_interval") out.push_back("train.checkpoint_interval=0");
  if (key != "train.resume_from" && !config_text(run, "train.resume_from").empty()) {
    out.push_back("train.resume_from=");
  }
  const std::string init = config_text(run, "model.init_from");
  if (key != "model.init_from" && !init.empty() && inside(init, run.dir)) {
    out.push_back("model.init_from=");
  }
  return out;
}

// The distinct hosts the ranks' env.json name (host.hostname), those that have one.
std::set<std::string> rank_hosts(const std::string& run_dir, const rundir::DistributedFigures& d) {
  std::set<std::string> hosts;
  for (const std::string& rank_dir : d.rank_dirs) {
    const std::string env = rundir::path(rundir::path(run_dir, rank_dir), rundir::kEnv);
    if (!fs::exists(env)) continue;
    const rundir::Env e = rundir::read_env(env);
    if (e.host && e.host->hostname) hosts.insert(*e.host->hostname);
  }
  return hosts;
}

}  // namespace

TrialRanks trial_ranks(const std::string& run_dir) {
  TrialRanks r;
  std::vector<rundir::InputWarning> warnings;
  const auto s = rundir::read_summary(rundir::path(run_dir, rundir::kSummary), warnings);
  if (!s || !s->distributed || s->distributed->world_size <= 1) return r;
  const rundir::DistributedFigures& d = *s->distributed;
  r.world_size = d.world_size;
  r.launcher = d.launcher;
  if (d.rank) {
    r.untried = fmt::format(
        "{} is rank {}'s own directory of a {}-rank run: `llmprof report --try {}` tries the "
        "run with all its ranks",
        run_dir, *d.rank, d.world_size, d.top_dir.empty() ? "<its top directory>" : d.top_dir);
  } else if (d.launcher == "slurm") {
    r.untried = fmt::format(
        "the run's {} ranks were started by Slurm (srun) on its job's nodes; a trial starts "
        "ranks only on this host (`llmprof train --nproc {}`), which would measure another "
        "machine's communication",
        d.world_size, d.world_size);
  } else if (const std::set<std::string> hosts = rank_hosts(run_dir, d); hosts.size() > 1) {
    std::string names;
    for (const auto& h : hosts) names += (names.empty() ? "" : ", ") + h;
    r.untried = fmt::format(
        "the run's {} ranks ran on {} hosts ({}); a trial starts all of them on this host "
        "(`llmprof train --nproc {}`), which is not the run's layout",
        d.world_size, hosts.size(), names, d.world_size);
  }
  return r;
}

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
  const TrialRanks ranks = trial_ranks(run.dir);
  std::vector<PlannedTry> out;
  for (const Finding& f : findings) {
    for (const std::string& set : f.sets) {
      auto it =
          std::find_if(out.begin(), out.end(), [&](const PlannedTry& p) { return p.set == set; });
      if (it == out.end()) {
        out.push_back({set, {}, {}, steps, ranks});
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
    p.trial.common_sets = common_sets(run, p.set, steps, wall);
    p.trial.candidate_sets = {p.set};
    p.trial.tag = fmt::format("try{}", i + 1);
    p.trial.figure = wall ? ab::Figure::kWallUsPerToken : ab::Figure::kStepUsPerToken;
    p.trial.nproc = ranks.world_size;
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
  t.world_size = planned.ranks.world_size;
  t.launcher = planned.ranks.world_size <= 1   ? "none"
               : planned.ranks.untried.empty() ? "nproc"
                                               : planned.ranks.launcher;
  t.error = why;
  t.time = time;
  t.command = command;
  return t;
}

}  // namespace llmprof::report
