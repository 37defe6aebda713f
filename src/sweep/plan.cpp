// The plan of a sweep, decided once per launcher invocation (make_plan), and plan.json, from which
// run-point and status read it back.
#include "plan.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/process/child.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/sweep_doc.h"
#include "llmprof/sweep/sweep.h"
#include "locks.h"

namespace llmprof::sweep {
namespace {

namespace fs = std::filesystem;

// MFU compares points only if they share one peak: each run measuring its own under the load of
// the other points (--jobs) or of the machine gave figures 2x apart. So the sweep measures the
// peak once, with `llmprof peak` at the points' thread count, and passes it to every point, unless
// the user set profile.peak_flops_per_s, or threads / precision vary across the grid. Decided
// here; measured (or reused) by share_peak once the sweep directory is locked.
void decide_peak(Plan& plan, const config::Config& base) {
  rundir::SweepContext& info = plan.info;
  auto swept = [&](const std::string& key) {
    return std::any_of(info.grid.begin(), info.grid.end(),
                       [&](const GridAxis& a) { return a.key == key; });
  };
  // base has the --set overrides applied: profile.peak_flops_per_s=0 asks for a measurement.
  if (base.profile.peak_flops_per_s > 0 || swept("profile.peak_flops_per_s")) {
    info.peak_source = "configured";
    return;
  }
  // threads_per_point 0: swept, or all cores of a node not known here.
  if (info.threads_per_point == 0 || swept("train.precision")) {
    info.peak_source = "per point (threads or precision vary)";
    return;
  }
  plan.shared_peak = true;
  plan.precision = base.train.precision;
  info.peak_source =
      fmt::format("measured once by the sweep: llmprof peak --threads {} --precision {}",
                  info.threads_per_point, config::name(plan.precision));
}

// A user's threads (--set threads=N, or a threads axis in the grid) replaces the sweep's split:
// info.threads_per_point then says what the points run with (N; 0 when swept; N = 0 is all
// cores). Returns whether threads was given.
bool decide_threads(rundir::SweepContext& info,
                    const config::Config& base,
                    const std::vector<std::string>& overrides,
                    config::Launcher launcher) {
  const bool swept = std::any_of(info.grid.begin(), info.grid.end(),
                                 [](const GridAxis& axis) { return axis.key == "threads"; });
  std::string set;  // the last --set threads=..., the one that wins
  for (const std::string& s : overrides) {
    if (s.substr(0, s.find('=')) == "threads") set = s;
  }
  if (!swept && set.empty()) return false;
  const int64_t split = info.threads_per_point;
  const std::string split_source = info.threads_source;
  if (swept) {
    info.threads_per_point = 0;
    info.threads_source = "the grid's threads axis (per point)";
  } else if (base.threads > 0) {
    info.threads_per_point = base.threads;
    info.threads_source = "--set " + set;
  } else {  // threads=0: all cores of wherever the point runs
    const bool here = launcher == config::Launcher::kLocal;
    info.threads_per_point = here ? info.cores : 0;
    info.threads_source = "--set " + set + " (all cores" + (here ? "" : " of the node") + ")";
  }
  spdlog::warn("threads from {} replaces the sweep's split ({}: {} per point){}",
               swept ? "the grid" : "--set " + set, split_source, split,
               info.threads_per_point > 0
                   ? fmt::format(": each point runs {} thread{}", info.threads_per_point,
                                 info.threads_per_point == 1 ? "" : "s")
                   : std::string());
  const int64_t busy = info.jobs * info.threads_per_point;
  if (launcher == config::Launcher::kLocal && busy > info.cores) {
    spdlog::warn("{} points at a time x {} threads = {} threads on {} cores: the points compete "
                 "for cores and their step times include it",
                 info.jobs, info.threads_per_point, busy, info.cores);
  }
  return true;
}

// The key lines of a to_yaml document: comments (the header names the source file) cut off.
std::vector<std::string> value_lines(const std::string& yaml) {
  std::vector<std::string> out;
  std::istringstream in(yaml);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find(" #"));
    line.erase(line.find_last_not_of(' ') + 1);  // comment alignment depends on the widest value
    // The shared peak is measured again on every sweep command: not a config difference.
    if (line.find("peak_flops_per_s:") != std::string::npos) continue;
    if (line.find_first_not_of(' ') == std::string::npos ||
        line[line.find_first_not_of(' ')] == '#')
      continue;
    out.push_back(line);
  }
  return out;
}

}  // namespace

std::vector<std::string> point_sets(const Plan& plan, const Point& p) {
  int64_t threads = plan.info.threads_per_point;
  // A Slurm task runs with the CPUs it was given; none given (or a user's threads=) keeps the plan.
  if (const char* env = std::getenv("SLURM_CPUS_PER_TASK"); env != nullptr && plan.threads_from_env) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) threads = n;
  }
  std::vector<std::string> sets{fmt::format("threads={}", threads)};
  sets.insert(sets.end(), plan.info.overrides.begin(), plan.info.overrides.end());
  if (plan.info.peak_flops_per_s > 0) {
    sets.push_back(fmt::format("profile.peak_flops_per_s={}", plan.info.peak_flops_per_s));
  }
  for (const auto& [key, value] : p.values) {
    if (key != kNprocKey) sets.push_back(key + "=" + value);  // nproc is the launch's, not a key
  }
  // A data-parallel point splits its threads (the last threads= given) among its ranks.
  if (const int64_t nproc = point_nproc(p); nproc > 1) {
    for (const std::string& s : sets) {
      if (s.rfind("threads=", 0) == 0) threads = std::atoll(s.c_str() + 8);
    }
    sets.push_back(fmt::format("threads={}", std::max<int64_t>(1, threads / nproc)));
  }
  sets.push_back("output.dir=" + plan.runs_dir);
  sets.push_back("output.name=" + p.id);
  return sets;
}

Plan make_plan(const SweepOptions& opts,
               config::Launcher launcher,
               int64_t slurm_cpus_per_task,
               int64_t slurm_max_tasks) {
  if (opts.repeat < 1)
    throw UsageError(fmt::format("--repeat {}: expected 1 or more", opts.repeat));
  if (opts.jobs < 1) throw UsageError(fmt::format("--jobs {}: expected 1 or more", opts.jobs));
  for (const std::string& set : opts.overrides) {
    const std::string key = set.substr(0, set.find('='));
    if (key == "output.dir" || key == "output.name") {
      throw UsageError("--set " + set + ": " + key +
                       " is set by llmprof sweep (each point runs "
                       "in <sweep dir>/runs/<point id>); use --out or --name instead");
    }
  }
  Plan plan;
  rundir::SweepContext& info = plan.info;
  const config::Config base = config::load_config(opts.config_path, opts.overrides);
  Grid cli;
  for (const std::string& arg : opts.grid_args) cli.push_back(parse_grid_arg(arg));
  info.grid = resolve_grid(base, merge_grids(read_sweep_section(opts.config_path), cli));
  plan.points = expand_points(info.grid, opts.repeat);
  validate_points(base, plan.points);

  const std::string name =
      opts.name.empty() ? "sweep-" + fs::path(opts.config_path).stem().string() : opts.name;
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    throw UsageError("--name '" + name + "': expected a plain directory name");
  }
  // Absolute: run-point, the Slurm tasks and the report job find the sweep from anywhere.
  info.sweep_dir =
      fs::absolute(fs::path(opts.out_dir.empty() ? base.output.dir : opts.out_dir) / name)
          .lexically_normal()
          .string();
  plan.runs_dir = rundir::path(info.sweep_dir, rundir::kSweepRuns);
  info.base_config = fs::absolute(opts.config_path).lexically_normal().string();
  info.workdir = fs::current_path().string();
  info.launcher = launcher;
  info.overrides = opts.overrides;
  info.repeat = opts.repeat;
  info.cores = process::usable_cores();
  if (launcher == config::Launcher::kSlurm) {
    // The cluster schedules: each task gets cpus_per_task CPUs and runs one point with them.
    info.jobs_requested = slurm_max_tasks;
    info.jobs = slurm_max_tasks;
    info.jobs_policy =
        "Slurm job array: at most jobs tasks at once (sbatch --array=...%jobs; 0 = no limit)";
    info.threads_per_point = slurm_cpus_per_task;
    info.threads_source = "sweep.slurm.cpus_per_task (SLURM_CPUS_PER_TASK in each task)";
  } else {
    info.jobs_requested = opts.jobs;
    info.jobs = std::min(opts.jobs, info.cores);
    info.jobs_policy = "--jobs above the core count is clamped to it, with a warning";
    if (info.jobs < opts.jobs) {
      spdlog::warn("--jobs {} exceeds the {} available cores: running {} points at a time",
                   opts.jobs, info.cores, info.jobs);
    }
    info.threads_per_point = std::max<int64_t>(1, info.cores / info.jobs);
    info.threads_source = "cores / jobs";
  }
  plan.threads_from_env = !decide_threads(info, base, opts.overrides, launcher);
  info.command_line = opts.command_line;
  info.start_time = output::local_time_now("%Y-%m-%dT%H:%M:%S%z");
  info.invocation = fmt::format("{} pid {}", info.start_time, ::getpid());
  plan.executable = opts.executable.empty() ? process::self_executable() : opts.executable;
  decide_peak(plan, base);
  return plan;
}

// The shared peak: the one an earlier invocation of this sweep measured under the same settings
// (sweep.json), so old and new points divide by one figure; else measured now. Called with the
// sweep directory locked.
void share_peak(Plan& plan) {
  if (!plan.shared_peak) return;
  rundir::SweepContext& info = plan.info;
  if (auto stored = read_stored_peak(info.sweep_dir);
      stored && stored->source == info.peak_source) {
    info.peak_flops_per_s = stored->flops_per_s;
    info.peak_measured_at = stored->measured_at;
    info.peak_reused = true;
    spdlog::info("peak for MFU: {:.1f} GFLOP/s, reused from this sweep's measurement{} ({})",
                 info.peak_flops_per_s * 1e-9,
                 info.peak_measured_at.empty() ? "" : " of " + info.peak_measured_at,
                 rundir::path(info.sweep_dir, rundir::kSweepJson));
    return;
  }
  // Its stdout only (stderr captured and dropped); a peak that cannot be started is unknown.
  const std::vector<std::string> argv = {plan.executable,
                                         "peak",
                                         "--flops-only",
                                         "--threads",
                                         std::to_string(info.threads_per_point),
                                         "--precision",
                                         std::string(config::name(plan.precision))};
  const std::string cmd = fmt::format(
      "'{}' peak --flops-only --threads {} --precision {} 2>/dev/null", argv[0], argv[4], argv[6]);
  std::string out;
  try {
    out = process::run_capture(argv).out;
  } catch (const IoError&) {
  }
  const size_t at = out.find("peak_flops_per_s: ");
  double flops = 0;
  if (at != std::string::npos) {
    try {
      flops = std::stod(out.substr(at + 18));
    } catch (const std::exception&) {
      flops = 0;
    }
  }
  if (!(flops > 0)) {
    spdlog::warn("could not measure a shared peak ({}): each point measures its own", cmd);
    info.peak_source = "per point (shared measurement failed)";
    return;
  }
  info.peak_flops_per_s = flops;
  info.peak_measured_at = output::local_time_now("%Y-%m-%dT%H:%M:%S%z");  // sweep.json keeps it
  spdlog::info("peak for MFU: {:.1f} GFLOP/s ({})", info.peak_flops_per_s * 1e-9, info.peak_source);
}

std::string config_difference(const Plan& plan, const Point& p, const std::string& run_dir) {
  auto expected =
      value_lines(config::to_yaml(config::load_config(plan.info.base_config, point_sets(plan, p))));
  std::vector<std::string> found;
  try {
    // A data-parallel point (nproc > 1): rank 0's config, named as its rank directory.
    const bool ranks = point_nproc(p) > 1;
    config::Config cfg =
        config::load_config(rundir::path(ranks ? run_dir + "/rank0" : run_dir, rundir::kConfig));
    if (ranks) cfg.output.name = p.id;
    found = value_lines(config::to_yaml(cfg));
  } catch (const Error& e) {
    return std::string("its config.yaml does not load: ") + e.what();
  }
  for (size_t i = 0; i < std::max(expected.size(), found.size()); ++i) {
    std::string now = i < expected.size() ? expected[i] : "",
                then = i < found.size() ? found[i] : "";
    if (now != then) return "'" + then + "' now '" + now + "'";
  }
  return "";
}


void write_plan(const Plan& plan) {
  rundir::SweepPlan doc;
  doc.context = plan.info;
  doc.threads_from_env = plan.threads_from_env;
  doc.points = plan.points;
  rundir::write_sweep_plan(rundir::path(plan.info.sweep_dir, rundir::kSweepPlan), doc);
}

Plan read_plan(const std::string& sweep_dir) {
  const std::string file = rundir::path(sweep_dir, rundir::kSweepPlan);
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    throw DataError(fmt::format(
        "{}: not found; '{}' is not a sweep directory made by llmprof sweep (or one made before "
        "plan.json existed: run the sweep command again to write it)",
        file, sweep_dir));
  }
  rundir::SweepPlan doc = rundir::read_sweep_plan(file);
  Plan plan;
  plan.info = std::move(doc.context);
  plan.points = std::move(doc.points);
  plan.runs_dir = rundir::path(plan.info.sweep_dir, rundir::kSweepRuns);
  plan.threads_from_env = doc.threads_from_env;
  plan.executable = process::self_executable();
  return plan;
}

std::optional<PointResult> finished_run(const Plan& plan, const Point& p, bool warn_if_changed) {
  const std::string run_dir = plan.runs_dir + "/" + p.id;
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return std::nullopt;
  PointResult prior;
  prior.run_dir = run_dir;
  prior.log_path = rundir::run_log_path(run_dir);
  if (!read_summary(run_dir, prior) || !is_final_status(prior.status)) return std::nullopt;
  if (std::string diff = config_difference(plan, p, run_dir); !diff.empty()) {
    if (warn_if_changed) {
      spdlog::warn("sweep: {} ran before with another config ({}): running it again", p.id, diff);
    }
    return std::nullopt;
  }
  prior.exit_code = prior.status == config::PointStatus::kCompleted ? kExitOk : kExitRuntime;
  return prior;
}

}  // namespace llmprof::sweep
