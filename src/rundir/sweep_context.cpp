// The context block shared by plan.json and sweep.json, a point's outcome, and the ordered-JSON
// layer of the sweep documents (sweep_doc_json.h).
#include <fmt/format.h>

#include <climits>
#include <utility>

#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "read_util.h"
#include "sweep_doc_json.h"

namespace llmprof::rundir::detail {

namespace {

constexpr const char* kResumePolicy =
    "a re-run or re-submission skips points whose summary.json says completed or diverged "
    "(diverged is an outcome of the config); failed, interrupted and unfinished points run "
    "again, their earlier run directory and log renamed to <id>.attempt<N>; a point runs only "
    "under its lock runs/<id>.lock, so no two tasks ever run it at once";

template <typename E>
E enum_field(ObjectReader& o, const std::string& key, E fallback) {
  const std::optional<std::string> v = o.text(key);
  return v ? parse_name<E>(*v, o.file(), o.field(key)) : fallback;
}

GridAxis read_axis(ObjectReader& o) {
  for (const char* key : {"key", "values", "origin"}) o.require(key);
  GridAxis a;
  a.key = o.text("key").value_or("");
  a.values = string_list(o, "values");
  a.origin = o.text("origin").value_or("");
  return a;
}

// The context's fields after the grid: counts, the thread split, the shared peak, the command.
void read_settings(ObjectReader& doc, SweepFile in, SweepContext& c) {
  const bool sweep = in == SweepFile::kSweep;
  for (const char* key : {"overrides", "repeat", "jobs", "jobs_requested", "jobs_policy",
                          "threads_per_point", "cores", "command_line", "start_time"}) {
    doc.require(key);
  }
  for (const char* key : {"peak_flops_per_s", "peak_source", "peak_measured_at", "peak_reused",
                          "invocation"}) {
    field_since(doc, key, sweep);
  }
  doc.later("threads_source");
  c.overrides = string_list(doc, "overrides");
  c.repeat = doc.integer("repeat").value_or(0);
  c.jobs = doc.integer("jobs").value_or(0);
  c.jobs_requested = doc.integer("jobs_requested").value_or(0);
  c.jobs_policy = doc.text("jobs_policy").value_or("");
  c.threads_per_point = doc.integer("threads_per_point").value_or(0);
  c.threads_source = doc.text("threads_source").value_or("");
  c.peak_flops_per_s = doc.number("peak_flops_per_s").value_or(0);
  c.peak_source = doc.text("peak_source").value_or("");
  c.peak_measured_at = doc.text("peak_measured_at").value_or("");
  c.peak_reused = doc.boolean("peak_reused").value_or(false);
  c.cores = doc.integer("cores").value_or(0);
  c.command_line = string_list(doc, "command_line");
  c.start_time = doc.text("start_time").value_or("");
  c.invocation = doc.text("invocation").value_or("");
  doc.raw("resume_policy");  // a fixed sentence, written again
}

}  // namespace

std::string ordered_text(OJson doc, const std::map<std::string, std::string>& unknown) {
  for (const auto& [pointer, text] : unknown) {
    doc[OJson::json_pointer(pointer)] = OJson::parse(text);
  }
  return doc.dump(2) + "\n";
}

std::optional<int> small_integer(ObjectReader& o, const std::string& key) {
  const std::optional<int64_t> v = o.integer(key);
  if (v && (*v < INT_MIN || *v > INT_MAX)) o.fail(key, "an integer of int's range");
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

OJson context_json(const SweepContext& c) {
  OJson grid = OJson::array();
  for (const GridAxis& axis : c.grid) {
    grid.push_back({{"key", axis.key}, {"values", axis.values}, {"origin", axis.origin}});
  }
  OJson j;
  j["schema_version"] = kSweepSchemaVersion;
  j["status"] = config::name(c.status);
  j["status_note"] = empty_as_null(c.status_note);
  j["launcher"] = config::name(c.launcher);
  j["base_config"] = c.base_config;
  j["sweep_dir"] = c.sweep_dir;
  j["workdir"] = c.workdir;
  j["grid"] = std::move(grid);
  j["overrides"] = c.overrides;
  j["repeat"] = c.repeat;
  j["jobs"] = c.jobs;
  j["jobs_requested"] = c.jobs_requested;
  j["jobs_policy"] = c.jobs_policy;
  j["threads_per_point"] = c.threads_per_point > 0 ? OJson(c.threads_per_point) : OJson(nullptr);
  j["threads_source"] = c.threads_source;
  j["peak_flops_per_s"] = c.peak_flops_per_s > 0 ? OJson(c.peak_flops_per_s) : OJson(nullptr);
  j["peak_source"] = c.peak_source;
  j["peak_measured_at"] = empty_as_null(c.peak_measured_at);
  j["peak_reused"] = c.peak_reused;
  j["cores"] = c.cores;
  j["command_line"] = c.command_line;
  j["start_time"] = c.start_time;
  j["invocation"] = c.invocation;
  j["resume_policy"] = kResumePolicy;
  return j;
}

void read_sweep_status(ObjectReader& doc, SweepContext& c) {
  c.status = enum_field(doc, "status", config::SweepState::kRunning);
  c.status_note = doc.text("status_note").value_or("");
}

SweepContext read_context(ObjectReader& doc, DocContext& ctx, SweepFile in) {
  const bool sweep = in == SweepFile::kSweep;
  for (const char* key : {"status", "base_config", "sweep_dir", "grid"}) doc.require(key);
  for (const char* key : {"launcher", "workdir"}) field_since(doc, key, sweep);
  doc.later("status_note");
  SweepContext c;
  read_sweep_status(doc, c);
  c.launcher = enum_field(doc, "launcher", config::Launcher::kLocal);
  c.base_config = doc.text("base_config").value_or("");
  c.sweep_dir = doc.text("sweep_dir").value_or("");
  c.workdir = doc.text("workdir").value_or("");
  c.grid = object_list<GridAxis>(doc, ctx, "grid", read_axis);
  read_settings(doc, in, c);
  return c;
}

void put_outcome(OJson& j, const PointOutcome& o) {
  j["status"] = config::name(o.status);
  j["exit_code"] = or_null(o.exit_code);
  j["signal"] = or_null(o.signal);
  j["message"] = o.message;
  j["run_dir"] = o.run_dir;
  j["log"] = o.log_path;
  j["host"] = o.host;
  j["slurm_job_id"] = o.slurm_job_id;
  j["slurm_task_id"] = o.slurm_task_id;
  j["start_time"] = o.start_time;
  j["end_time"] = o.end_time;
  j["duration_s"] = or_null(o.duration_s);
  j["invocation"] = o.invocation;
  j["moved_aside"] = o.moved_aside;
}

PointOutcome read_outcome(ObjectReader& o, SweepFile in) {
  const bool sweep = in == SweepFile::kSweep;
  for (const char* key : {"status", "exit_code", "signal", "message", "run_dir", "log",
                          "duration_s", "moved_aside"}) {
    o.require(key);
  }
  for (const char* key : {"host", "slurm_job_id", "slurm_task_id", "start_time", "end_time"}) {
    field_since(o, key, sweep);
  }
  PointOutcome r;
  r.status = enum_field(o, "status", config::PointStatus::kPending);
  r.exit_code = small_integer(o, "exit_code");
  r.signal = small_integer(o, "signal");
  r.message = o.text("message").value_or("");
  r.run_dir = o.text("run_dir").value_or("");
  r.log_path = o.text("log").value_or("");
  r.duration_s = o.number("duration_s");
  r.moved_aside = string_list(o, "moved_aside");
  r.host = o.text("host").value_or("");
  r.slurm_job_id = o.text("slurm_job_id").value_or("");
  r.slurm_task_id = o.text("slurm_task_id").value_or("");
  r.start_time = o.text("start_time").value_or("");
  r.end_time = o.text("end_time").value_or("");
  if (!sweep) {  // sweep.json leaves it out: the context's invocation says which ran
    o.require("invocation");
    r.invocation = o.text("invocation").value_or("");
  }
  return r;
}

}  // namespace llmprof::rundir::detail
