// run_sweep, the local launcher: plan (every check that can fail on user input, before anything
// runs; plan.cpp), then a scheduling loop that keeps `jobs` points running, each as
// `llmprof sweep run-point` (the entry point the Slurm launcher's tasks use too), and follows
// their outcomes through the point records they write.
#include "llmprof/sweep/sweep.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <numeric>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/process/child.h"
#include "llmprof/rundir/files.h"
#include "locks.h"
#include "plan.h"
#include "progress.h"
#include "record.h"
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

// `llmprof sweep run-point <sweep> --index i --quiet`: its warnings go to the sweep's stderr.
std::vector<std::string> run_point_argv(const Plan& plan, size_t index) {
  return {plan.executable, "sweep", "run-point", plan.info.sweep_dir, "--index",
          std::to_string(index), "--quiet"};
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
  Scheduler(Plan& plan,
            std::vector<PointResult>& results,
            std::deque<size_t> queue,
            bool quiet,
            const process::StopSignals& signals)
      : signals_(signals),
        plan_(plan),
        results_(results),
        progress_(static_cast<int64_t>(plan.points.size()), quiet),
        queue_(std::move(queue)) {}

  // Runs the queue; returns the stop signal received (0 when every point ran).
  int run() {
    const rundir::SweepContext& info = plan_.info;
    progress_.event(fmt::format("{} points ({} already done) in {}; {} at a time, {}",
                                results_.size(), count_points(results_).done(), info.sweep_dir,
                                info.jobs,
                                info.threads_per_point > 0
                                    ? fmt::format("{} thread{} each", info.threads_per_point,
                                                  info.threads_per_point == 1 ? "" : "s")
                                    : std::string("threads from the grid")),
                    Kind::kNote);
    bool forwarded = false;
    while (true) {
      const int stop = signals_.signal();
      if (stop != 0 && !forwarded) {  // once: a second SIGINT would make train stop mid-step
        for (const Running& r : running_) process::send_signal(r.pid, stop);
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
    return signals_.signal();
  }

 private:
  void launch_next() {
    const size_t i = queue_.front();
    queue_.pop_front();
    const Point& p = plan_.points[i];
    PointResult& r = results_[i];
    try {
      process::ChildSpec child;
      child.argv = run_point_argv(plan_, i);
      child.name = "a point process";
      child.own_group = true;  // a Ctrl-C reaches the sweep only, which forwards it once
      running_.push_back({i, process::spawn(child).pid, Clock::now()});
      r.status = config::PointStatus::kRunning;
      progress_.event("start " + p.id, Kind::kPointEvent);
    } catch (const IoError& e) {
      r.status = config::PointStatus::kFailed;
      r.message = e.what();
      progress_.event(p.id + " failed: " + r.message, Kind::kWarning);
    }
  }

  // Records every point process that has exited; true when there was one.
  bool reap_finished() {
    bool reaped = false;
    for (auto it = running_.begin(); it != running_.end();) {
      int wait_status = 0;
      if (!process::try_reap(it->pid, wait_status)) {
        ++it;
        continue;
      }
      const size_t index = it->index;
      const Point& p = plan_.points[index];
      const double wall_s = std::chrono::duration<double>(Clock::now() - it->start).count();
      it = running_.erase(it);
      reaped = true;
      results_ = refresh_tables(plan_);  // the point's record says how it went
      for (size_t q : queue_) results_[q] = PointResult{};  // what is left runs again
      for (const Running& other : running_) {
        results_[other.index].status = config::PointStatus::kRunning;
      }
      PointResult& r = results_[index];
      if (r.status == config::PointStatus::kPending) {  // run-point ended before recording anything
        r = finished_result(plan_.runs_dir + "/" + p.id, r.log_path, wait_status);
      }
      if (!r.duration_s) r.duration_s = wall_s;
      durations_s_.push_back(*r.duration_s);
      progress_.event(fmt::format("{} {} in {:.1f} s{} [{}]", p.id, config::name(r.status),
                                  *r.duration_s, r.message.empty() ? "" : " (" + r.message + ")",
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

  const process::StopSignals& signals_;
  Plan& plan_;
  std::vector<PointResult>& results_;
  detail::SweepProgress progress_;
  std::deque<size_t> queue_;  // indices into plan_.points, in run order
  std::vector<Running> running_;
  std::vector<double> durations_s_;  // of points run by this invocation
};

// What the sweep came to: points by final status.
SweepOutcome outcome(const rundir::SweepContext& info, const std::vector<PointResult>& results,
                     bool stopped) {
  SweepOutcome o;
  o.sweep_dir = info.sweep_dir;
  o.points = static_cast<int64_t>(results.size());
  o.stopped = stopped;
  for (const PointResult& r : results) {
    o.completed += r.status == config::PointStatus::kCompleted;
    o.diverged += r.status == config::PointStatus::kDiverged;
    o.failed += r.status == config::PointStatus::kFailed;
    o.interrupted += r.status == config::PointStatus::kInterrupted;
    o.not_run += r.status == config::PointStatus::kPending;
    o.skipped += r.status == config::PointStatus::kSkipped;
  }
  return o;
}

// --plan: the points predicted not to fit, with the reason, by index; every point's config is
// checked before anything runs (ConfigError for one that cannot be planned).
std::map<size_t, std::string> unfitting_points(const Plan& plan, const SweepOptions& opts) {
  std::map<size_t, std::string> out;
  if (!opts.fits_check) return out;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const Point& p = plan.points[i];
    std::string why =
        opts.fits_check(config::load_config(plan.info.base_config, point_sets(plan, p)));
    if (!why.empty()) out.emplace(i, "predicted not to fit: " + std::move(why));
  }
  return out;
}

// Records the points predicted not to fit as skipped, with the reason, and takes them off the
// queue (a completed run of the same config is kept as it is).
void skip_unfitting(const Plan& plan, const std::map<size_t, std::string>& unfitting,
                    std::deque<size_t>& queue) {
  std::deque<size_t> keep;
  for (size_t i : queue) {
    const auto it = unfitting.find(i);
    if (it == unfitting.end()) {
      keep.push_back(i);
      continue;
    }
    PointResult r;
    r.status = config::PointStatus::kSkipped;
    r.message = it->second;
    r.invocation = plan.info.invocation;
    write_record(plan, plan.points[i], r);
  }
  queue = std::move(keep);
}

}  // namespace

SweepOutcome run_sweep(const SweepOptions& opts) {
  // From the start: a signal while planning (the peak measurement takes seconds) stops the sweep
  // before its first point, as one during the points does, instead of killing it.
  process::StopSignals signals;
  Plan plan = make_plan(opts, config::Launcher::kLocal, 0, 0);
  const std::map<size_t, std::string> unfitting = unfitting_points(plan, opts);
  rundir::SweepContext& info = plan.info;
  std::error_code ec;
  fs::create_directories(plan.runs_dir, ec);
  if (ec) throw IoError("cannot create sweep directory '" + plan.runs_dir + "': " + ec.message());
  detail::DirLock lock(rundir::path(info.sweep_dir, rundir::kSweepLock), kLockTimeout_s);
  share_peak(plan);
  write_plan(plan);
  // Points that finished with this config before are kept; the rest run (again).
  std::deque<size_t> queue;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    if (!finished_run(plan, plan.points[i], /*warn_if_changed=*/false)) queue.push_back(i);
  }
  const int64_t reused = static_cast<int64_t>(plan.points.size() - queue.size());
  skip_unfitting(plan, unfitting, queue);
  std::vector<PointResult> results = refresh_tables(plan);
  for (size_t i : queue) results[i] = PointResult{};  // not reused, whatever it shows now
  const bool interrupted = Scheduler(plan, results, std::move(queue), opts.quiet, signals).run() != 0;
  info.status = interrupted ? config::SweepState::kInterrupted : config::SweepState::kFinished;
  write_plan(plan);
  results = refresh_tables(plan);
  SweepOutcome o = outcome(info, results, interrupted);
  o.reused = reused;
  return o;
}

}  // namespace llmprof::sweep
