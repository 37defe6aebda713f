// run_sweep: plan (every check that can fail on user input, before anything runs), resume (what
// an earlier invocation left in <sweep>/runs), then a scheduling loop that keeps `jobs` point
// processes running, records each outcome as it arrives and rewrites sweep.csv/sweep.json.
#include "llmprof/sweep/sweep.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/sweep/grid.h"
#include "process.h"
#include "progress.h"
#include "results.h"

namespace llmprof::sweep {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Kind = detail::SweepProgress::Kind;

// How long a re-run waits for points of a killed sweep to finish their step and let go of the lock.
constexpr double kLockTimeout_s = 120;
// Poll interval of the scheduling loop: point processes last seconds at least.
constexpr int64_t kPollMs = 50;

struct Plan {
  SweepInfo info;
  std::vector<Point> points;
  std::string runs_dir;    // <sweep>/runs: run directories and logs of the points
  std::string executable;  // the llmprof that runs each point
  bool shared_peak = false;  // the sweep measures one MFU peak for every point (see below)
  config::Precision precision = config::Precision::kFp32;  // of every point, for that measurement
};

// The --set list a point's `llmprof train` gets, in order: the thread split, the user's --set,
// the shared peak (after the user's profile.peak_flops_per_s=0, which asked for it), the point's
// values, where its run goes.
std::vector<std::string> point_sets(const Plan& plan, const Point& p) {
  std::vector<std::string> sets{fmt::format("threads={}", plan.info.threads_per_point)};
  sets.insert(sets.end(), plan.info.overrides.begin(), plan.info.overrides.end());
  if (plan.info.peak_flops_per_s > 0) {
    sets.push_back(fmt::format("profile.peak_flops_per_s={}", plan.info.peak_flops_per_s));
  }
  for (const auto& [key, value] : p.values) sets.push_back(key + "=" + value);
  sets.push_back("output.dir=" + plan.runs_dir);
  sets.push_back("output.name=" + p.id);
  return sets;
}

std::vector<std::string> point_argv(const Plan& plan, const Point& p) {
  std::vector<std::string> argv{plan.executable, "train", "--config", plan.info.base_config};
  for (const std::string& s : point_sets(plan, p)) argv.insert(argv.end(), {"--set", s});
  argv.push_back("--quiet");
  return argv;
}

// MFU compares points only if they share one peak: each run measuring its own under the load of
// the other points (--jobs) or of the machine gave figures 2x apart. So the sweep measures the
// peak once, with `llmprof peak` at the points' thread count, and passes it to every point, unless
// the user set profile.peak_flops_per_s, or threads / precision vary across the grid. Decided
// here; measured (or reused) by share_peak once the sweep directory is locked.
void decide_peak(Plan& plan, const config::Config& base, bool threads_given) {
  SweepInfo& info = plan.info;
  auto swept = [&](const std::string& key) {
    return std::any_of(info.grid.begin(), info.grid.end(),
                       [&](const GridAxis& a) { return a.key == key; });
  };
  // base has the --set overrides applied: profile.peak_flops_per_s=0 asks for a measurement.
  if (base.profile.peak_flops_per_s > 0 || swept("profile.peak_flops_per_s")) {
    info.peak_source = "configured";
    return;
  }
  if (threads_given || swept("train.precision")) {
    info.peak_source = "per point (threads or precision vary)";
    return;
  }
  plan.shared_peak = true;
  plan.precision = base.train.precision;
  info.peak_source =
      fmt::format("measured once by the sweep: llmprof peak --threads {} --precision {}",
                  info.threads_per_point, config::name(plan.precision));
}

// The shared peak: the one an earlier invocation of this sweep measured under the same settings
// (sweep.json), so old and new points divide by one figure; else measured now. Called with the
// sweep directory locked.
void share_peak(Plan& plan) {
  if (!plan.shared_peak) return;
  SweepInfo& info = plan.info;
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
  const std::string cmd =
      fmt::format("'{}' peak --threads {} --precision {} 2>/dev/null", plan.executable,
                  info.threads_per_point, config::name(plan.precision));
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, f) != nullptr) out += buf;
    pclose(f);
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

Plan make_plan(const SweepOptions& opts) {
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
  SweepInfo& info = plan.info;
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
  info.sweep_dir =
      (fs::path(opts.out_dir.empty() ? base.output.dir : opts.out_dir) / name).string();
  plan.runs_dir = rundir::path(info.sweep_dir, rundir::kSweepRuns);
  info.base_config = opts.config_path;
  info.overrides = opts.overrides;
  info.repeat = opts.repeat;
  info.cores = detail::available_cores();
  info.jobs_requested = opts.jobs;
  info.jobs = std::min(opts.jobs, info.cores);
  info.jobs_policy = "--jobs above the core count is clamped to it, with a warning";
  if (info.jobs < opts.jobs) {
    spdlog::warn("--jobs {} exceeds the {} available cores: running {} points at a time", opts.jobs,
                 info.cores, info.jobs);
  }
  info.threads_per_point = std::max<int64_t>(1, info.cores / info.jobs);
  const bool threads_given =
      std::any_of(opts.overrides.begin(), opts.overrides.end(),
                  [](const std::string& set) { return set.rfind("threads=", 0) == 0; }) ||
      std::any_of(info.grid.begin(), info.grid.end(),
                  [](const GridAxis& axis) { return axis.key == "threads"; });
  if (threads_given) {
    spdlog::warn(
        "threads is given by --set or --grid: it overrides the sweep's split of {} "
        "threads per point (threads_per_point in sweep.json)",
        info.threads_per_point);
  }
  info.command_line = opts.command_line;
  plan.executable = opts.executable.empty() ? detail::self_executable() : opts.executable;
  decide_peak(plan, base, threads_given);
  return plan;
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

// Why an earlier run's config.yaml differs from the config this point would run with now (the
// first differing line), or "" when it is the same.
std::string config_difference(const Plan& plan, const Point& p, const std::string& run_dir) {
  auto expected =
      value_lines(config::to_yaml(config::load_config(plan.info.base_config, point_sets(plan, p))));
  std::vector<std::string> found;
  try {
    found = value_lines(config::to_yaml(config::load_config(run_dir + "/config.yaml")));
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

// Decides what to do with a point from what earlier invocations left: reuse a completed or
// diverged run of the same config, or move an unfinished one (and its log) aside to
// <id>.attempt<N> so the point runs again. Never deletes or overwrites a run.
PointResult prepare_point(const Plan& plan, const Point& p) {
  PointResult r;
  const std::string run_dir = plan.runs_dir + "/" + p.id;
  r.log_path = run_dir + ".log";
  std::error_code ec;
  if (fs::is_directory(run_dir, ec)) {
    PointResult prior = r;
    prior.run_dir = run_dir;
    if (read_summary(run_dir, prior) && is_final_status(prior.status)) {
      std::string diff = config_difference(plan, p, run_dir);
      if (diff.empty()) {
        prior.reused = true;
        prior.exit_code = prior.status == "completed" ? kExitOk : kExitRuntime;
        return prior;
      }
      spdlog::warn("sweep: {} ran before with another config ({}): running it again", p.id, diff);
    }
  }
  if (!fs::exists(run_dir, ec) && !fs::exists(r.log_path, ec)) return r;
  int n = 1;
  auto attempt = [&](int k) { return fmt::format("{}/{}.attempt{}", plan.runs_dir, p.id, k); };
  while (fs::exists(attempt(n), ec) || fs::exists(attempt(n) + ".log", ec)) ++n;
  for (const auto& [from, to] :
       {std::pair{run_dir, attempt(n)}, {r.log_path, attempt(n) + ".log"}}) {
    if (!fs::exists(from, ec)) continue;
    fs::rename(from, to, ec);
    if (ec) throw IoError("cannot move '" + from + "' aside to '" + to + "': " + ec.message());
    r.moved_aside.push_back(to);
  }
  return r;
}

struct Running {
  size_t index;  // into plan.points
  pid_t pid;
  Clock::time_point start;
};

// Keeps up to `jobs` point processes running until the queue is empty or a stop signal came,
// recording each outcome as it arrives and rewriting sweep.csv/sweep.json after it.
class Scheduler {
 public:
  Scheduler(Plan& plan, std::vector<PointResult>& results, bool quiet)
      : plan_(plan), results_(results), progress_(static_cast<int64_t>(plan.points.size()), quiet) {
    for (size_t i = 0; i < results_.size(); ++i) {
      if (!results_[i].reused) queue_.push_back(i);
    }
  }

  // Runs the queue; returns the stop signal received (0 when every point ran).
  int run() {
    const SweepInfo& info = plan_.info;
    progress_.event(fmt::format("{} points ({} already done) in {}; {} at a time, {} threads each",
                                results_.size(), count_points(results_).done(), info.sweep_dir,
                                info.jobs, info.threads_per_point),
                    Kind::kNote);
    write_sweep_files(info, plan_.points, results_);
    detail::StopSignals signals;
    bool forwarded = false;
    while (true) {
      const int stop = signals.signal();
      if (stop != 0 && !forwarded) {  // once: a second SIGINT would make train stop mid-step
        for (const Running& r : running_) detail::send_signal(r.pid, stop);
        forwarded = true;
        progress_.event(
            fmt::format("signal {}: no new points; waiting for {} running", stop, running_.size()),
            Kind::kWarning);
      }
      while (stop == 0 && !queue_.empty() && static_cast<int64_t>(running_.size()) < info.jobs) {
        launch_next();
      }
      if (running_.empty() && (stop != 0 || queue_.empty())) break;
      const bool reaped = reap_finished();
      progress_.status(count_points(results_), running_ids(), eta(), reaped);
      if (!reaped) detail::sleep_ms(kPollMs);
    }
    progress_.finish();
    return signals.signal();
  }

 private:
  void launch_next() {
    const size_t i = queue_.front();
    queue_.pop_front();
    const Point& p = plan_.points[i];
    PointResult& r = results_[i];
    try {
      running_.push_back({i, detail::spawn_point(point_argv(plan_, p), r.log_path), Clock::now()});
      r.status = "running";
      progress_.event("start " + p.id, Kind::kPointEvent);
    } catch (const IoError& e) {
      r.status = "failed";
      r.message = e.what();
      progress_.event(p.id + " failed: " + r.message, Kind::kWarning);
    }
    write_sweep_files(plan_.info, plan_.points, results_);
  }

  // Records every point process that has exited; true when there was one.
  bool reap_finished() {
    bool reaped = false;
    for (auto it = running_.begin(); it != running_.end();) {
      int wait_status = 0;
      if (!detail::try_reap(it->pid, wait_status)) {
        ++it;
        continue;
      }
      const Point& p = plan_.points[it->index];
      PointResult& r = results_[it->index];
      std::vector<std::string> moved = r.moved_aside;
      r = finished_result(plan_.runs_dir + "/" + p.id, r.log_path, wait_status);
      r.moved_aside = moved;
      r.duration_s = std::chrono::duration<double>(Clock::now() - it->start).count();
      durations_s_.push_back(*r.duration_s);
      it = running_.erase(it);
      reaped = true;
      write_sweep_files(plan_.info, plan_.points, results_);
      progress_.event(fmt::format("{} {} in {:.1f} s{} [{}]", p.id, r.status, *r.duration_s,
                                  r.message.empty() ? "" : " (" + r.message + ")",
                                  detail::progress_text(count_points(results_),
                                                        static_cast<int64_t>(results_.size()),
                                                        running_ids(), eta())),
                      is_final_status(r.status) ? Kind::kPointEvent : Kind::kWarning);
    }
    return reaped;
  }

  std::vector<std::string> running_ids() const {
    std::vector<std::string> ids;
    for (const Running& r : running_) ids.push_back(plan_.points[r.index].id);
    return ids;
  }

  // Seconds left: the mean duration of points run so far for each queued point, less the time
  // running points have had, spread over the jobs. nullopt until one point has finished.
  std::optional<double> eta() const {
    if (durations_s_.empty()) return std::nullopt;
    const double mean = std::accumulate(durations_s_.begin(), durations_s_.end(), 0.0) /
                        static_cast<double>(durations_s_.size());
    double left = mean * static_cast<double>(queue_.size());
    for (const Running& r : running_) {
      left += std::max(0.0, mean - std::chrono::duration<double>(Clock::now() - r.start).count());
    }
    return left / static_cast<double>(plan_.info.jobs);
  }

  Plan& plan_;
  std::vector<PointResult>& results_;
  detail::SweepProgress progress_;
  std::deque<size_t> queue_;  // indices into plan_.points, in run order
  std::vector<Running> running_;
  std::vector<double> durations_s_;  // of points run by this invocation
};

// What the sweep came to: points by final status, how many were reused.
SweepOutcome outcome(const SweepInfo& info, const std::vector<PointResult>& results,
                     bool stopped) {
  SweepOutcome o;
  o.sweep_dir = info.sweep_dir;
  o.points = static_cast<int64_t>(results.size());
  o.stopped = stopped;
  for (const PointResult& r : results) {
    if (r.status == "completed") ++o.completed;
    if (r.status == "diverged") ++o.diverged;
    if (r.status == "failed") ++o.failed;
    if (r.status == "interrupted") ++o.interrupted;
    if (r.status == "pending") ++o.not_run;
    o.reused += r.reused;
  }
  return o;
}

}  // namespace

SweepOutcome run_sweep(const SweepOptions& opts) {
  Plan plan = make_plan(opts);
  SweepInfo& info = plan.info;
  std::error_code ec;
  fs::create_directories(plan.runs_dir, ec);
  if (ec) throw IoError("cannot create sweep directory '" + plan.runs_dir + "': " + ec.message());
  detail::DirLock lock(info.sweep_dir + "/.lock", kLockTimeout_s);
  info.start_time = output::local_time_now("%Y-%m-%dT%H:%M:%S%z");
  share_peak(plan);
  std::vector<PointResult> results;
  for (const Point& p : plan.points) results.push_back(prepare_point(plan, p));

  const bool interrupted = Scheduler(plan, results, opts.quiet).run() != 0;
  info.status = interrupted ? "interrupted" : "finished";
  write_sweep_files(info, plan.points, results);
  return outcome(info, results, interrupted);
}

}  // namespace llmprof::sweep
