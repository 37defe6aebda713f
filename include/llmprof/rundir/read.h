// Reading run and sweep directories back: the one reader of every file llmprof writes, for
// report, plot and the sweep's resume. Files that are absent leave their fields empty; a
// malformed file throws DataError naming the file and line (exit 2). What a killed run or a
// full disk cut short (the last row of a CSV file, an empty file) is left out with a warning and
// the run marked incomplete. Unknown values (empty CSV fields, JSON null) stay nullopt, never 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/rundir/comm_tables.h"
#include "llmprof/config/enums.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/rundir/tables.h"

namespace llmprof::rundir {

// Why a run read back has no RunStatus, as report tables print it in the status column.
enum class NoStatus : int {
  kUnknown = 0,     // summary.json is there without a status (null or absent)
  kIncomplete = 1,  // no summary.json: the run was killed, or is still running
};

}  // namespace llmprof::rundir

namespace llmprof::config {
LLMPROF_ENUM_NAMES(rundir::NoStatus, "status", "unknown", "incomplete");
}  // namespace llmprof::config

namespace llmprof::rundir {

// A part of an input left out because it was cut short (a row of a killed run, a file a full disk
// left empty). Readers carry these as data; only the CLI prints them.
struct InputWarning {
  std::string run;      // label of the run it belongs to; empty until the report names it
  std::string file;     // path of the file
  int64_t line = 0;     // 1-based line of the left-out row; 0 = the whole file
  std::string message;  // what was wrong and what was done about it

  // "<file> line <n>: <message>", or "<file>: <message>" for a whole file.
  std::string text() const;
};

namespace detail {
[[noreturn]] void throw_unknown_name(const std::string& where,
                                     std::string_view field,
                                     std::string_view text,
                                     const std::string_view* names,
                                     size_t count);
}  // namespace detail

// The value of the name-table enum E (config/enums.h) named `text`, as a file llmprof writes
// spells it (a status, a profile level); anything else is a DataError "<where>: <field> '<text>'
// is not one of a|b|c", where names the file (and line).
template <typename E>
E parse_name(std::string_view text, const std::string& where, std::string_view field) {
  if (std::optional<E> value = config::find_enum<E>(text)) return *value;
  detail::throw_unknown_name(where, field, text, config::EnumTable<E>::names.data(),
                             config::EnumTable<E>::names.size());
}

// summary.json "energy", as the report and sweeps read it.
using EnergySummary = telemetry::EnergyFigures;

// summary.json at path: nullopt when absent, or empty (with a warning). Invalid JSON throws
// DataError naming the file, line and column.
std::optional<Summary> read_summary(const std::string& path, std::vector<InputWarning>& warnings);

// A component of summary.json's plan section as a report shows it.
struct PlanRow {
  std::string component;  // parameters | gradients | optimizer_state | saved_for_backward | ...
  std::optional<double> predicted_bytes, measured_bytes, ratio;  // ratio = predicted / measured
};

// Everything a report or plot needs from one run directory.
struct Run {
  std::string dir;          // as given
  std::string label;        // short name for tables and legends (the directory's name)
  std::optional<config::RunStatus> status;  // summary.json status; nullopt without one
  bool has_summary = false;                 // summary.json was there (and not empty)
  bool incomplete = false;  // no summary.json, or a file cut short (see warnings)
  // summary.json profile_level: which of modules.csv and ops.csv the run was asked to write;
  // nullopt without summary.json (or one from before the field).
  std::optional<config::ProfileLevel> profile_level;
  std::string message;      // summary.json message (why a run stopped), may be empty
  std::vector<InputWarning> warnings;  // rows and files left out because they were cut short

  std::map<std::string, std::string> config;     // config.yaml flattened: "train.batch_size" -> "4"
  std::vector<PlanRow> plan;  // summary.json plan: predicted vs measured memory by component
  std::string plan_peak_predicted, plan_peak_measured;  // "phase [/ module]"
  std::optional<double> host_memory_bytes;       // env.json host.memory_bytes
  std::optional<double> host_cores;              // env.json host.cores
  std::optional<double> peak_flops_per_s;        // env.json peak_flops.flops_per_s
  std::optional<double> peak_bytes_per_s;        // env.json peak_bandwidth.bytes_per_s
  std::optional<double> peak_bf16_flops_per_s;   // env.json peak_flops.bf16_flops_per_s
  std::optional<double> peak_busbw_bytes_per_s;  // env.json peak_comm.busbw_bytes_per_s
  bool native_bf16 = false;                      // env.json host.avx512_bf16 or host.amx_bf16
  std::string torch_version;                     // env.json torch.version ("" when absent)
  std::optional<int64_t> summary_warmup_steps;   // summary.json steps.warmup_excluded
  std::optional<int64_t> summary_max_steps;      // summary.json steps.max_steps
  std::optional<double> summary_peak_rss_bytes;  // summary.json memory.peak_rss_bytes
  std::optional<EnergySummary> energy;           // summary.json energy, when present
  std::optional<GqaSummary> gqa;                 // summary.json model.gqa, when present
  // A data-parallel run's top directory: its ranks (summary.json distributed.world_size; 1
  // elsewhere, its figures then one process's) and each rank's own figures, the straggler first.
  int64_t world_size = 1;
  std::vector<RankFigures> rank_figures;

  std::vector<StepRow> steps;  // steps.csv
  std::vector<EvalRow> evals;
  std::vector<ModuleRow> modules;
  std::vector<OpRow> ops;       // the recorded steps' (per step)
  std::vector<OpRow> eval_ops;  // eval passes run inside a recorded window (per pass)
  std::vector<MemoryRow> memory;
  std::vector<ActivationRow> activations;
  // A data-parallel run's top directory (rundir/comm_tables.h); empty elsewhere.
  std::vector<CommStepRow> comm_steps;      // comm_steps.csv
  std::vector<CollectiveRow> collectives;   // collectives.csv

  // The status as tables print it: its name; "unknown" when summary.json has none; "incomplete"
  // without summary.json.
  std::string status_text() const;

  // A config value as a number, or nullopt when absent or not numeric.
  std::optional<double> config_number(const std::string& key) const;
};

// Why run has no rows of the file that profile.level `needed` records (modules.csv at modules,
// ops.csv at ops), from summary.json's profile_level: "recorded at profile.level=phases;
// ops.csv needs profile.level=ops", or "profile.level=ops, but ops.csv holds no rows"; "" when
// the level is unknown (no summary.json) or the file has rows.
std::string why_no_rows(const Run& run, config::ProfileLevel needed);

// Reads a run directory. Throws DataError (exit 2) for a missing directory, a directory without
// steps.csv (or an empty one), or a malformed file (naming the file and line); parts cut short
// are left out into Run::warnings.
Run load_run(const std::string& dir);

// Gives runs that share a directory name a "parent/name" label so tables and legends tell them
// apart.
void disambiguate_labels(const std::vector<Run*>& runs);

// True when dir holds a sweep (sweep.csv) rather than a single run.
bool is_sweep_dir(const std::string& dir);

// ---------------------------------------------------------------------------------------------
// Sweeps: sweep.csv has one row per point and repeat; the swept keys are the columns before
// `repeat`, then sweep_columns(). Its column table writes and reads it (rundir/sweep_table.h).
// Point runs live under <sweep>/runs/<point_id>/.

// sweep.csv's columns after the swept keys, in file order (the column table's names).
const std::vector<std::string>& sweep_columns();

// The metric columns as report names them, in table order (sweep.csv's median_step_ms and
// final_train_loss, final_val_loss, final_val_perplexity are read as step_ms, train_loss,
// val_loss, val_perplexity).
const std::vector<std::string>& sweep_metric_names();

// One sweep.csv row.
struct SweepPoint {
  std::vector<std::string> key_values;  // parallel to Sweep::keys, as written
  int64_t repeat = 0;
  std::string point_id;
  // The run's status; nullopt where the cell is empty (or the file has no status column). "ok"
  // reads as completed (the contract's older name); any other name outside config::RunStatus's
  // table is a DataError naming the file, the line and the value.
  std::optional<config::RunStatus> status;
  // The sweep did not run it (sweep.csv "skipped": a --plan sweep's point predicted not to fit);
  // status is then nullopt and its figures unknown.
  bool skipped = false;
  std::optional<double> exit_code;
  std::map<std::string, std::optional<double>> metrics;  // sweep_metric_names() -> value
  std::string run_dir;  // resolved point run directory; empty when it does not exist
};

struct Sweep {
  std::string dir;
  std::string label;
  std::vector<std::string> keys;  // swept keys, dotted ("train.batch_size")
  std::vector<SweepPoint> points;
  bool energy_estimated = false;  // sweep.csv energy_estimated: some energy is a TDP estimate
  // sweep.json "status" (running, or killed, submitted, submit_failed, finished, interrupted);
  // nullopt without sweep.json. A name outside the table is a DataError naming the file.
  std::optional<config::SweepState> status;
  std::vector<InputWarning> warnings;  // a row cut short (left out); a sweep not finished
};

// Reads a sweep directory. Throws DataError for a missing directory or malformed sweep.csv
// (naming the file and line); sweep.json is checked for validity when present. A last row cut
// short is left out into Sweep::warnings, as is a sweep.json status other than finished.
Sweep load_sweep(const std::string& dir);

// Parses a decimal number (also nan/inf); nullopt when the text is not entirely a number.
std::optional<double> parse_number(const std::string& text);

}  // namespace llmprof::rundir
