// submit_sweep: plan as the local launcher does, write <sweep>/slurm/{array,report}.sbatch, submit
// the array (a task per point still to run, at most K at once) and the report job after it, and
// log the submission in slurm/submissions.csv. Nothing here waits for the cluster.
#include "llmprof/sweep/slurm.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/process/child.h"
#include "llmprof/rundir/files.h"
#include "llmprof/sweep/sweep.h"
#include "locks.h"
#include "plan.h"
#include "record.h"

namespace llmprof::sweep {
namespace {

namespace fs = std::filesystem;

// How long a submission waits for a local sweep (or its points) that holds the directory.
constexpr double kLockTimeout_s = 120;

// s as one bash word: '...' with each ' written '\''.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "0-3,5,7-8": ascending indices as sbatch --array ranges.
std::string index_ranges(const std::vector<int64_t>& indices) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (j == i ? std::to_string(indices[i])
                                              : fmt::format("{}-{}", indices[i], indices[j]));
    i = j + 1;
  }
  return out;
}

// Where compute nodes usually cannot see what this host wrote.
bool is_node_local(const std::string& path) {
  for (const char* prefix : {"/tmp/", "/var/tmp/", "/dev/shm/"}) {
    if (path.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The #SBATCH lines every job of the sweep shares.
std::string common_lines(const SlurmSettings& s, const std::string& workdir) {
  std::string out = fmt::format("#SBATCH --chdir={}\n", workdir);
  if (!s.partition.empty()) out += fmt::format("#SBATCH --partition={}\n", s.partition);
  if (!s.time.empty()) out += fmt::format("#SBATCH --time={}\n", s.time);
  return out;
}

// Tasks each array job holds: the largest nproc of the grid (a point of nproc N runs
// `srun --ntasks N llmprof train`, one rank per task), 1 without an nproc axis.
int64_t max_nproc(const Plan& plan) {
  int64_t most = 1;
  for (const Point& p : plan.points) most = std::max(most, point_nproc(p));
  return most;
}

std::string array_script(const Plan& plan, const SlurmSettings& s, const std::string& logs) {
  std::string out = fmt::format(
      "#!/bin/bash\n"
      "# llmprof sweep {}: one array task per point (written by llmprof sweep --launcher slurm).\n"
      "# Task i runs point i of plan.json; `llmprof sweep status {}` shows where it stands.\n"
      "#SBATCH --job-name={}\n"
      "#SBATCH --output={}/%A_%a.out\n"
      "#SBATCH --ntasks={}\n"
      "#SBATCH --cpus-per-task={}\n",
      plan.info.sweep_dir, plan.info.sweep_dir, fs::path(plan.info.sweep_dir).filename().string(),
      logs, max_nproc(plan), s.cpus_per_task);
  out += common_lines(s, plan.info.workdir);
  if (!s.mem.empty()) out += fmt::format("#SBATCH --mem={}\n", s.mem);
  if (!s.gres.empty()) out += fmt::format("#SBATCH --gres={}\n", s.gres);
  // exec: the task's exit code is run-point's, so a failed point is a FAILED task.
  out += fmt::format("exec {} sweep run-point {} --index \"$SLURM_ARRAY_TASK_ID\"\n",
                     shell_quote(plan.executable), shell_quote(plan.info.sweep_dir));
  return out;
}

std::string report_script(const Plan& plan, const SlurmSettings& s, const std::string& logs) {
  const std::string exe = shell_quote(plan.executable), dir = shell_quote(plan.info.sweep_dir);
  std::string out = fmt::format(
      "#!/bin/bash\n"
      "# llmprof sweep {}: the report and charts, once every array task has ended.\n"
      "#SBATCH --job-name={}-report\n"
      "#SBATCH --output={}/report_%j.out\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task=1\n",
      plan.info.sweep_dir, fs::path(plan.info.sweep_dir).filename().string(), logs);
  out += common_lines(s, plan.info.workdir);
  out += fmt::format(
      "set -e\n"
      "# status first: a task killed before it could record its end shows as interrupted.\n"
      "{} sweep status {}\n"
      "{} report {} --out {}/report.md\n"
      "{} plot {} --out {}/plots\n",
      exe, dir, exe, dir, dir, exe, dir, dir);
  return out;
}

// sbatch's message as one line: its lines (usually "sbatch: error: ...") joined with "; ".
std::string one_line(const std::string& text) {
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

// Runs sbatch --parsable with args; the job id. Throws Error with sbatch's own message.
std::string sbatch(const std::string& program, const std::vector<std::string>& args) {
  std::vector<std::string> argv{program, "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  const process::Captured c = process::run_capture(argv);
  const bool ok = WIFEXITED(c.wait_status) && WEXITSTATUS(c.wait_status) == 0;
  std::string id = one_line(c.out);
  id = id.substr(0, id.find(';'));  // "<id>;<cluster>" on a multi-cluster setup
  if (!ok || id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    std::string shown;
    for (const std::string& a : argv) shown += (shown.empty() ? "" : " ") + a;
    const std::string said = one_line(c.err.empty() ? c.out : c.err);
    throw Error(fmt::format("sbatch refused the job ({}): {}", shown,
                            said.empty() ? (ok ? "no job id in its output" : "no message")
                                         : said));
  }
  return id;
}

// Appends one row to <sweep>/slurm/submissions.csv (header first), flushed.
void log_submission(const std::string& path, const std::vector<std::string>& row) {
  std::error_code ec;
  const bool fresh = !fs::exists(path, ec);
  std::ofstream out(path, std::ios::app | std::ios::binary);
  if (!out) throw IoError("cannot append to '" + path + "'");
  auto line = [&out](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << output::csv_field(fields[i]);
    out << '\n';
  };
  if (fresh) line({"submitted_at", "array_job_id", "report_job_id", "array", "points"});
  line(row);
  out.close();  // flushes: a full disk shows here
  if (!out) throw IoError("cannot append to '" + path + "': " + std::strerror(errno));
}

// The cluster's settings with the command line's: --slurm-arg lines and --jobs.
SlurmSettings with_options(const SweepOptions& opts, const SlurmSettings& settings) {
  SlurmSettings s = settings;
  s.extra_args.insert(s.extra_args.end(), opts.slurm_args.begin(), opts.slurm_args.end());
  if (opts.jobs_given) {
    if (opts.jobs < 1) throw UsageError(fmt::format("--jobs {}: expected 1 or more", opts.jobs));
    s.max_concurrent_tasks = opts.jobs;
  }
  return s;
}

std::string sbatch_program() {
  const std::string program = process::find_program("sbatch");
  if (program.empty()) {
    throw Error(
        "sbatch not found on PATH: --launcher slurm submits with Slurm's sbatch; run it on a "
        "host with the Slurm client tools (a login node), or use --launcher local");
  }
  return program;
}

// Logged before submitting: they matter most when sbatch then refuses, or the tasks fail on other
// nodes.
void warn_node_local(const Plan& plan) {
  for (const std::string& path : {plan.info.sweep_dir, plan.executable, plan.info.base_config}) {
    if (is_node_local(path)) {
      spdlog::warn(
          "'{}' is under a node-local directory: compute nodes other than this host cannot see "
          "it; use a shared filesystem (home, project or scratch) for --out, the config and "
          "llmprof",
          path);
    }
  }
}

// Each point counted as done or running, or listed to run.
void classify_points(const Plan& plan, SlurmSubmission& sub) {
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const Point& p = plan.points[i];
    if (finished_run(plan, p, /*warn_if_changed=*/false)) {
      ++sub.done;
    } else if (detail::is_locked(point_lock_path(plan, p))) {
      ++sub.running;
    } else {
      sub.to_run.push_back(static_cast<int64_t>(i));
    }
  }
}

// sbatch's arguments: the given ones, the cluster's extra arguments, the script.
std::vector<std::string> sbatch_args(std::string first,
                                     const SlurmSettings& s,
                                     const std::string& script) {
  std::vector<std::string> args{std::move(first)};
  args.insert(args.end(), s.extra_args.begin(), s.extra_args.end());
  args.push_back(script);
  return args;
}

// The array job of the points to run; sweep.json says submit_failed when sbatch refuses it.
void submit_array(const std::string& program,
                  const SlurmSettings& s,
                  Plan& plan,
                  SlurmSubmission& sub) {
  try {
    sub.array_job_id =
        sbatch(program, sbatch_args("--array=" + sub.array_spec, s, sub.array_script));
  } catch (const Error& e) {
    // Nothing is queued: sweep.json and `llmprof sweep status` say so, not "submitted".
    plan.info.status = config::SweepState::kSubmitFailed;
    plan.info.status_note = std::string(e.what()) + "; none of its points was queued";
    write_plan(plan);
    refresh_tables(plan);
    throw Error(std::string(e.what()) + "; nothing was submitted (sweep.json status "
                "submit_failed; the same command submits again)");
  }
}

// The report job after the array; submissions.csv gets the row of what was queued.
void submit_report(const std::string& program,
                   const SlurmSettings& s,
                   const std::string& slurm_dir,
                   const std::string& sweep_dir,
                   SlurmSubmission& sub) {
  const std::string log = rundir::path(slurm_dir, rundir::kSlurmSubmissions);
  try {
    sub.report_job_id = sbatch(
        program, sbatch_args("--dependency=afterany:" + sub.array_job_id, s, sub.report_script));
  } catch (const Error& e) {
    // The array is queued and runs: record it, and say how to get the report without the job.
    log_submission(log, {output::local_time_now("%Y-%m-%dT%H:%M:%S%z"), sub.array_job_id, "",
                         sub.array_spec, std::to_string(sub.to_run.size())});
    throw Error(
        fmt::format("{}; the array job {} was submitted and runs the points: once it "
                    "ends, run `llmprof report {}` and `llmprof plot {}` (or scancel {})",
                    e.what(), sub.array_job_id, sweep_dir, sweep_dir, sub.array_job_id));
  }
  log_submission(log, {output::local_time_now("%Y-%m-%dT%H:%M:%S%z"), sub.array_job_id,
                       sub.report_job_id, sub.array_spec, std::to_string(sub.to_run.size())});
}

}  // namespace

SlurmSubmission submit_sweep(const SweepOptions& opts, const SlurmSettings& settings) {
  const SlurmSettings s = with_options(opts, settings);
  Plan plan = make_plan(opts, config::Launcher::kSlurm, s.cpus_per_task, s.max_concurrent_tasks);
  const std::string program = sbatch_program();
  SlurmSubmission sub;
  const rundir::SweepContext& info = plan.info;
  sub.sweep_dir = info.sweep_dir;
  sub.points = static_cast<int64_t>(plan.points.size());
  warn_node_local(plan);
  const std::string slurm_dir = rundir::path(info.sweep_dir, rundir::kSweepSlurm);
  sub.logs = rundir::path(slurm_dir, rundir::kSlurmLogs);
  std::error_code ec;
  for (const std::string& d : {plan.runs_dir, sub.logs}) {
    fs::create_directories(d, ec);
    if (ec) throw IoError("cannot create '" + d + "': " + ec.message());
  }
  detail::DirLock lock(rundir::path(info.sweep_dir, rundir::kSweepLock), kLockTimeout_s);
  share_peak(plan);
  plan.info.status = config::SweepState::kSubmitted;
  write_plan(plan);
  classify_points(plan, sub);
  refresh_tables(plan);
  if (sub.to_run.empty()) return sub;

  sub.array_script = slurm_dir + "/array.sbatch";
  sub.report_script = slurm_dir + "/report.sbatch";
  output::write_file_atomic(sub.array_script, array_script(plan, s, sub.logs));
  output::write_file_atomic(sub.report_script, report_script(plan, s, sub.logs));
  sub.array_spec = index_ranges(sub.to_run);
  if (s.max_concurrent_tasks > 0) sub.array_spec += fmt::format("%{}", s.max_concurrent_tasks);
  submit_array(program, s, plan, sub);
  submit_report(program, s, slurm_dir, info.sweep_dir, sub);
  return sub;
}

std::vector<std::string> slurm_queue_lines(const std::string& sweep_dir) {
  const std::string path =
      rundir::path(rundir::path(sweep_dir, rundir::kSweepSlurm), rundir::kSlurmSubmissions);
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string ids;
  const auto rows = output::parse_csv(text);
  for (size_t r = 1; r < rows.size(); ++r) {
    for (size_t c : {size_t{1}, size_t{2}}) {
      if (c < rows[r].size() && !rows[r][c].empty()) ids += (ids.empty() ? "" : ",") + rows[r][c];
    }
  }
  if (ids.empty()) return {};
  const std::string squeue = process::find_program("squeue");
  if (squeue.empty()) return {"squeue: not on PATH (jobs " + ids + ")"};
  const process::Captured c =
      process::run_capture({squeue, "--noheader", "--jobs=" + ids, "--format=%i %T %M %R"});
  if (!WIFEXITED(c.wait_status) || WEXITSTATUS(c.wait_status) != 0) {
    return {"squeue --jobs=" + ids + ": " + (c.err.empty() ? "failed" : c.err)};
  }
  std::vector<std::string> lines;
  std::string line;
  std::istringstream lines_in(c.out);
  while (std::getline(lines_in, line)) {
    if (!line.empty()) lines.push_back("squeue: " + line);
  }
  if (lines.empty()) {
    lines.push_back("squeue: no job of this sweep is queued or running (" + ids + ")");
  }
  // sacct knows ended jobs too, where the cluster keeps accounting (not on every cluster).
  if (const std::string sacct = process::find_program("sacct"); !sacct.empty()) {
    const process::Captured a =
        process::run_capture({sacct, "--noheader", "--allocations", "--parsable2", "--jobs=" + ids,
                              "--format=JobID,State,ExitCode,Elapsed,NodeList"});
    std::istringstream acct(a.out);
    if (WIFEXITED(a.wait_status) && WEXITSTATUS(a.wait_status) == 0) {
      while (std::getline(acct, line)) {
        if (!line.empty()) lines.push_back("sacct: " + line);
      }
    }
  }
  return lines;
}

}  // namespace llmprof::sweep
