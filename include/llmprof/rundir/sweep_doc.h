// The three documents of a sweep directory as typed documents: plan.json (SweepPlan: the context,
// the points and whether a Slurm task's CPUs set its threads), runs/<id>.point.json (PointRecord:
// what run-point knows of one point) and sweep.json (SweepDoc: the context and every point with
// its outcome). sweep decides and measures, rundir writes and reads them: one writer and one
// reader each. Keys are written in the writer's fixed order (the release's order, schema_version
// first), so a file reads back and rewrites byte-identical; fields this version does not know are
// kept and written back at the end of their object. Schema kSweepSchemaVersion (rundir/files.h);
// fields in docs/sweep_plan.md, docs/point_record.md and docs/sweep.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::rundir {

// One swept key and its values, in run order (plan.json and sweep.json "grid").
struct GridAxis {
  std::string key;                  // dotted config key, e.g. "optim.lr" (or nproc)
  std::vector<std::string> values;  // as written (lists), generated (range, log), then canonical
  std::string origin;               // "--grid optim.lr=...", "FILE line L col C" or "default grid"
};

// One run of the sweep: a combination of axis values and a repeat number.
struct PlanPoint {
  int64_t index = 0;   // 1-based position in the grid, first axis outermost
  int64_t repeat = 1;  // 1-based
  std::vector<std::pair<std::string, std::string>> values;  // (key, canonical value), axis order
  std::string id;  // "p003-train.batch_size=16-optim.lr=0.0003-r1" (sweep::point_id)
};

// The sweep's context, the head of plan.json and of sweep.json. The launcher invocation that
// plans the sweep fills it; zero and "" are written as null where noted.
struct SweepContext {
  config::SweepState status = config::SweepState::kRunning;
  std::string status_note;  // why, for submit_failed (sbatch's message); "" (null) otherwise
  config::Launcher launcher = config::Launcher::kLocal;
  std::string base_config;  // absolute
  std::string sweep_dir;    // absolute
  std::string workdir;      // where points resolve relative paths (the launcher's cwd)
  std::vector<GridAxis> grid;
  std::vector<std::string> overrides;  // --set, applied to every point
  int64_t repeat = 1;
  int64_t jobs = 1;  // after clamping to cores (Slurm: the array's concurrency, 0 = no limit)
  int64_t jobs_requested = 1;
  std::string jobs_policy;        // how --jobs above the core count is handled
  int64_t threads_per_point = 1;  // 0 (null): threads is swept, so it varies
  std::string threads_source;     // where threads_per_point comes from, e.g. "cores / jobs"
  double peak_flops_per_s = 0;    // shared MFU peak passed to every point; 0 (null) = none
  std::string peak_source;
  std::string peak_measured_at;  // ISO 8601 time of the shared measurement; "" (null) when none
  bool peak_reused = false;      // true: taken from sweep.json of an earlier invocation
  int64_t cores = 1;
  std::vector<std::string> command_line;
  std::string start_time;  // ISO 8601, local time with offset
  std::string invocation;  // this launcher invocation: start time and pid
  // "resume_policy", a fixed sentence, is written after invocation and not kept.
};

// What is known of one point's run (the point record's body; sweep.json's points hold it too,
// invocation aside).
struct PointOutcome {
  config::PointStatus status = config::PointStatus::kPending;
  std::optional<int> exit_code;  // the train process's exit status; 128+N when killed by N
  std::optional<int> signal;     // N when the process was killed by signal N
  std::string message;           // why, when not completed
  std::string run_dir;           // <sweep>/runs/<id>, "" when the run left no directory
  std::string log_path;          // "log": <sweep>/runs/<id>.log
  std::optional<double> duration_s;      // wall time of the train process
  std::vector<std::string> moved_aside;  // earlier attempts renamed to <id>.attempt<N>[.log]
  std::string host;
  std::string slurm_job_id;   // SLURM_ARRAY_JOB_ID (else SLURM_JOB_ID); "" outside Slurm
  std::string slurm_task_id;  // SLURM_ARRAY_TASK_ID; "" outside a job array
  std::string start_time;     // ISO 8601, local time with offset
  std::string end_time;       // "" while running
  std::string invocation;     // the launcher invocation that ran it (plan.json's invocation)
};

// plan.json: what every launcher and `llmprof sweep run-point` read the sweep from.
struct SweepPlan {
  int schema_version = 0;  // as read; the writer writes kSweepSchemaVersion
  SweepContext context;
  bool threads_from_env = true;  // SLURM_CPUS_PER_TASK sets a point's threads (none given)
  std::vector<PlanPoint> points;
  std::map<std::string, std::string> unknown;  // read back: JSON pointer -> JSON text
};

// runs/<id>.point.json, rewritten when the point starts and when it ends.
struct PointRecord {
  int schema_version = 0;
  std::string id;
  PointOutcome outcome;
  std::map<std::string, std::string> unknown;
};

// One point of sweep.json: the plan's point and what became of it.
struct SweepDocPoint {
  PlanPoint point;
  PointOutcome outcome;  // outcome.invocation is not written; "" is written as null but for log
  bool reused = false;   // completed or diverged by an earlier invocation: not re-run
};

// sweep.json; its "counts" (points by status, in order of first appearance) is written from the
// points.
struct SweepDoc {
  int schema_version = 0;
  SweepContext context;
  std::vector<SweepDocPoint> points;
  std::map<std::string, std::string> unknown;
};

// Texts: keys in the writer's fixed order, two-space indent, a final newline.
std::string sweep_plan_text(const SweepPlan& d);
std::string point_record_text(const PointRecord& d);
std::string sweep_doc_text(const SweepDoc& d);
// Write path whole (temp + rename). Throw IoError.
void write_sweep_plan(const std::string& path, const SweepPlan& d);
void write_point_record(const std::string& path, const PointRecord& d);
void write_sweep_doc(const std::string& path, const SweepDoc& d);
// Parse a text; errors (DataError) name `file` and the field: invalid JSON, a missing
// first-version field, a field of the wrong type, a name outside its enum table, a newer
// schema_version. A later field that is absent reads as its default with a note in `notes`.
SweepPlan parse_sweep_plan(const std::string& text,
                           const std::string& file,
                           std::vector<std::string>* notes = nullptr);
PointRecord parse_point_record(const std::string& text,
                               const std::string& file,
                               std::vector<std::string>* notes = nullptr);
SweepDoc parse_sweep_doc(const std::string& text,
                         const std::string& file,
                         std::vector<std::string>* notes = nullptr);
// Read path; an absent or unreadable file is a DataError naming it.
SweepPlan read_sweep_plan(const std::string& path);
PointRecord read_point_record(const std::string& path);
SweepDoc read_sweep_doc(const std::string& path);

// sweep.json's status and status_note alone, as report and check read a sweep: a file from any
// version with these two fields (or none) reads. DataError for invalid JSON, a wrong type, a
// status outside config::SweepState's table.
struct SweepDocStatus {
  std::optional<config::SweepState> status;  // nullopt: the file has none
  std::string note;
};
SweepDocStatus read_sweep_doc_status(const std::string& path);

// docs/sweep_plan.md, docs/point_record.md, docs/sweep.md: every field, its type and when it is
// written, from the writers.
std::string sweep_plan_fields_doc();
std::string point_record_fields_doc();
std::string sweep_doc_fields_doc();

}  // namespace llmprof::rundir
