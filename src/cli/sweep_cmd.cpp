#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "llmprof/config/enums.h"
#include "llmprof/error.h"
#include "llmprof/output/log.h"
#include "llmprof/sweep/slurm.h"
#include "llmprof/sweep/sweep.h"

namespace llmprof::cli {

namespace {

// The closing lines on stdout; returns the exit code: 130 when the sweep was stopped, 1 when a
// point failed (or was stopped by something else), else 0.
int report(const sweep::SweepOutcome& o) {
  std::string counts =
      fmt::format("{} completed, {} diverged, {} failed", o.completed, o.diverged, o.failed);
  if (o.interrupted > 0) counts += fmt::format(", {} interrupted", o.interrupted);
  if (o.not_run > 0) counts += fmt::format(", {} not run", o.not_run);
  if (o.skipped > 0) counts += fmt::format(", {} skipped (predicted not to fit)", o.skipped);
  fmt::print("sweep:   {}\n", o.sweep_dir);
  fmt::print("points:  {} ({}; {} reused from earlier runs)\n", o.points, counts, o.reused);
  fmt::print("results: {}/sweep.csv\n", o.sweep_dir);
  if (o.stopped) return 130;
  return o.failed + o.interrupted > 0 ? kExitRuntime : kExitOk;
}

// What was submitted and how to follow it.
int report(const sweep::SlurmSubmission& s) {
  fmt::print("sweep:   {}\n", s.sweep_dir);
  fmt::print("points:  {} ({} done, {} running in an earlier submission, {} to run)\n", s.points,
             s.done, s.running, s.to_run.size());
  if (s.array_job_id.empty()) {
    fmt::print("nothing to submit: every point is done or running\n");
    fmt::print("watch:   llmprof sweep status {}\n", s.sweep_dir);
    return kExitOk;
  }
  fmt::print("array:   job {} (--array={}; {})\n", s.array_job_id, s.array_spec, s.array_script);
  fmt::print("report:  job {} after the array (llmprof report and plot into {}/report.md, plots/)\n",
             s.report_job_id, s.sweep_dir);
  fmt::print("logs:    {}/%A_%a.out\n", s.logs);
  fmt::print("watch:   llmprof sweep status {}   (or: squeue --jobs={},{})\n", s.sweep_dir,
             s.array_job_id, s.report_job_id);
  return kExitOk;
}

void add_run_point_command(CLI::App& sweep_cmd, int& exit_code) {
  struct Args {
    std::string dir;
    int64_t index = -1;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub = sweep_cmd.add_subcommand(
      "run-point", "Run one point of a planned sweep (what each launcher runs per point)");
  sub->add_option("sweep_dir", args->dir, "The sweep directory (holds plan.json)")->required();
  sub->add_option("--index", args->index, "0-based point index, e.g. $SLURM_ARRAY_TASK_ID")
      ->required();
  sub->add_flag("--quiet,-q", args->quiet, "Warnings and errors only");
  sub->footer(
      "Claims the point (runs/<id>.lock), skips it when a run of the same config finished or\n"
      "another task holds it, else runs llmprof train and records the outcome in\n"
      "runs/<id>.point.json and sweep.csv. Threads: SLURM_CPUS_PER_TASK when set.\n"
      "Exit: 0 completed, diverged or skipped; 1 failed; 130 interrupted; 2 bad sweep dir/index.");
  sub->callback([args, &exit_code]() {
    output::init_logging(args->quiet);
    const sweep::PointRunOutcome o = sweep::run_point(args->dir, args->index);
    if (!args->quiet || o.status == config::PointStatus::kFailed) {
      fmt::print("{}: {}{}{}\n", o.point_id, config::name(o.status),
                 o.status == config::PointStatus::kSkipped
                     ? ""
                     : fmt::format(" in {:.1f} s", o.duration_s),
                 o.message.empty() ? "" : " (" + o.message + ")");
    }
    exit_code = o.status == config::PointStatus::kFailed        ? kExitRuntime
                : o.status == config::PointStatus::kInterrupted ? 130
                                                                : kExitOk;
  });
}

void add_status_command(CLI::App& sweep_cmd, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto* sub = sweep_cmd.add_subcommand(
      "status", "Show a sweep's points pending / running / completed / failed / diverged");
  sub->add_option("sweep_dir", *dir, "The sweep directory")->required();
  sub->footer("Reads the sweep directory alone (and squeue/sacct for a Slurm sweep, where\n"
              "available); brings sweep.csv and sweep.json up to date.");
  sub->callback([dir, &exit_code]() {
    output::init_logging(false);
    const sweep::SweepStatus st = sweep::sweep_status(*dir);
    fmt::print("sweep:    {} (launcher {}, {})\n", st.sweep_dir, st.launcher,
               config::name(st.state));
    fmt::print(
        "points:   {}: {} pending, {} running, {} completed, {} diverged, {} failed, "
        "{} interrupted\n",
        st.points, st.pending, st.running, st.completed, st.diverged, st.failed, st.interrupted);
    fmt::print("progress: {}\n", st.progress);
    if (st.state ==
        config::SweepState::kSubmitFailed) {  // its pending points are not queued anywhere
      fmt::print("state:    submit_failed: {}\n", st.state_note);
    }
    for (const sweep::PointState& p : st.states) {
      if (p.status == config::PointStatus::kCompleted ||
          p.status == config::PointStatus::kDiverged || p.status == config::PointStatus::kPending) {
        continue;
      }
      std::string where = p.host.empty() ? "" : " on " + p.host;
      if (!p.slurm_job_id.empty()) {
        where += fmt::format(", job {}{}", p.slurm_job_id,
                             p.slurm_task_id.empty() ? "" : "_" + p.slurm_task_id);
      }
      fmt::print("  {:<11} {}{}, since {}{}\n", config::name(p.status), p.id, where, p.start_time,
                 p.message.empty() ? "" : ": " + p.message);
    }
    for (const std::string& line : sweep::slurm_queue_lines(st.sweep_dir)) {
      fmt::print("{}\n", line);
    }
    exit_code = kExitOk;
  });
}

// What `llmprof sweep` parses: the options, and what its callback reads besides them.
struct SweepArgs {
  sweep::SweepOptions opts;
  std::string launcher;
  std::string plan_device;
  CLI::Option* jobs = nullptr;
  CLI::Option* plan = nullptr;
};

void add_sweep_options(CLI::App& sub, SweepArgs& a) {
  sweep::SweepOptions& opts = a.opts;
  sub.add_option("--config,-c", opts.config_path,
                 "Base config (YAML or JSON); its `sweep: {grid: ...}` section gives a grid");
  sub.add_option("--grid", opts.grid_args,
                 "Swept key and values: --grid optim.lr=1e-4,3e-4 (repeatable; replaces the "
                 "file's grid key of the same name). Default grid when none: "
                 "train.batch_size=8,16,32 x optim.lr=1e-4,3e-4,1e-3");
  sub.add_option("--set", opts.overrides,
                 "Override a key for every point (repeatable); sweep.launcher and sweep.slurm.* "
                 "set the launcher, e.g. --set sweep.slurm.partition=debug");
  sub.add_option("--repeat", opts.repeat, "Runs per grid point (default 1)");
  a.jobs = sub.add_option("--jobs,-j", opts.jobs,
                          "Points run at once (default 1); threads per point = max(1, cores "
                          "/ jobs); clamped to the core count. Slurm: the array's %K");
  sub.add_option("--out", opts.out_dir, "Parent of the sweep directory (default output.dir)");
  sub.add_option("--name", opts.name, "Sweep directory name (default sweep-<config stem>)");
  sub.add_option("--launcher", a.launcher,
                 "local (default) or slurm: one sbatch job array, a task per point, and a "
                 "report job after it (default: the file's sweep.launcher)");
  sub.add_option("--slurm-arg", opts.slurm_args,
                 "Another sbatch argument for both jobs, e.g. --slurm-arg=--account=proj "
                 "(repeatable; after sweep.slurm.extra_args)");
  sub.add_flag("--quiet,-q", opts.quiet, "No progress; warnings and errors only");
  a.plan = sub.add_flag("--plan",
                        "Plan each point first (llmprof plan) and skip, as status skipped with the "
                        "reason, those predicted not to fit the device (local launcher)");
  sub.add_option("--plan-device", a.plan_device,
                 "The device --plan checks against: a name llmprof plan --device takes "
                 "(default: each point's config's device)")
      ->check(non_empty("a name llmprof plan --device takes, or leave --plan-device out"))
      ->needs(a.plan);
}

// The command line sweep.json records; --plan also sets the fit check.
void record_command_line(SweepArgs& a) {
  sweep::SweepOptions& opts = a.opts;
  std::vector<std::string>& cl = opts.command_line;
  cl = {"llmprof", "sweep", "--config", opts.config_path};
  for (const auto& g : opts.grid_args) cl.insert(cl.end(), {"--grid", g});
  for (const auto& s : opts.overrides) cl.insert(cl.end(), {"--set", s});
  cl.insert(cl.end(),
            {"--repeat", std::to_string(opts.repeat), "--jobs", std::to_string(opts.jobs)});
  if (!opts.out_dir.empty()) cl.insert(cl.end(), {"--out", opts.out_dir});
  if (!opts.name.empty()) cl.insert(cl.end(), {"--name", opts.name});
  if (!a.launcher.empty()) cl.insert(cl.end(), {"--launcher", a.launcher});
  for (const auto& s : opts.slurm_args) cl.push_back("--slurm-arg=" + s);
  if (opts.quiet) cl.push_back("--quiet");
  if (a.plan->count() > 0) {
    cl.push_back("--plan");
    if (!a.plan_device.empty()) cl.insert(cl.end(), {"--plan-device", a.plan_device});
    opts.fits_check = [d = a.plan_device](const config::Config& cfg) {
      return plan_misfit(cfg, d);
    };
  }
}

// Runs the sweep (local) or submits it (slurm); the exit code.
int run_sweep_command(SweepArgs& a) {
  sweep::SweepOptions& opts = a.opts;
  if (opts.config_path.empty()) {
    throw UsageError("sweep: --config is required (or a subcommand: run-point, status)");
  }
  record_command_line(a);
  output::init_logging(opts.quiet);
  opts.jobs_given = a.jobs->count() > 0;
  // The file's sweep section, then --set sweep.*, then --launcher, --jobs and --slurm-arg.
  sweep::LaunchSettings launch = sweep::read_launch_section(opts.config_path);
  sweep::apply_launch_sets(launch, opts.overrides);
  if (!a.launcher.empty()) {
    std::optional<config::Launcher> l = config::find_enum<config::Launcher>(a.launcher);
    if (!l) throw UsageError("--launcher '" + a.launcher + "': expected local or slurm");
    launch.launcher = *l;
  }
  if (launch.launcher == config::Launcher::kSlurm) {
    if (opts.fits_check) throw UsageError("--plan is for the local launcher (not slurm)");
    return report(sweep::submit_sweep(opts, launch.slurm));
  }
  if (!opts.slurm_args.empty()) {
    throw UsageError("--slurm-arg is for --launcher slurm (this sweep runs locally)");
  }
  return report(sweep::run_sweep(opts));
}

}  // namespace

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SweepArgs>();
  auto* sub = app.add_subcommand(
      "sweep", "Train once per grid point (each its own process) and tabulate the summaries");
  add_sweep_options(*sub, *args);
  sub->footer(
      "Writes <out>/<name>/sweep.csv (one row per finished point) and sweep.json; each point's\n"
      "run goes to <out>/<name>/runs/<point id>/ and its output to runs/<point id>.log.\n"
      "Re-running the same command resumes: completed and diverged points are kept, failed and\n"
      "interrupted ones run again (the earlier attempt is renamed <point id>.attempt<N>).\n"
      "--launcher slurm submits and returns; follow it with `llmprof sweep status <dir>`.\n"
      "Exit: 0 all completed or diverged, 1 any failed, 2 bad usage/config, 130 interrupted.\n"
      "Example: llmprof sweep --config configs/sweep_quick.yaml --jobs 2\n"
      "         llmprof sweep --config configs/sweep_quick.yaml --launcher slurm "
      "--slurm-arg=--partition=debug");
  add_run_point_command(*sub, exit_code);
  add_status_command(*sub, exit_code);
  sub->callback([sub, args, &exit_code]() {
    if (!sub->get_subcommands().empty()) return;  // run-point or status did the work
    exit_code = run_sweep_command(*args);
  });
}

}  // namespace llmprof::cli
