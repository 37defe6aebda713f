// sweep.csv as typed rows: one row per point and repeat with an outcome; the swept keys are the
// columns before `repeat`, then sweep_columns() (rundir/read.h). One column table
// (src/rundir/sweep_table.cpp) writes and reads it: each column's name, its cell from a row and
// its cell back into a row. sweep fills the rows, load_sweep reads them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::rundir {

struct InputWarning;

// One sweep.csv row. Unknown values are nullopt (an empty cell); a column an older file lacks
// reads as unknown ("" for text).
struct SweepRow {
  std::vector<std::string> key_values;  // parallel to SweepTable::keys, as written
  int64_t repeat = 0;                   // 1-based; an empty cell reads as 0
  std::string point_id;
  // Written by name. Read: a run's status (config::RunStatus's names), "ok" as completed (the
  // contract's older name); another name (skipped too) is a DataError naming the file, the line
  // and the value.
  std::optional<config::PointStatus> status;
  std::optional<double> exit_code;  // 128+N when killed by signal N; written whole
  // Medians over the measured steps; tokens_per_s and mfu are global for several ranks.
  std::optional<double> median_step_ms, tokens_per_s, mfu;
  std::optional<double> final_train_loss, final_val_loss, final_val_perplexity;
  std::optional<double> peak_rss_bytes;  // written whole
  std::optional<double> energy_j;
  std::optional<bool> energy_estimated;  // "1": a TDP estimate, "0": measured, "": no energy
  std::string run_dir;                   // as written (load_sweep resolves it)
  // Where and when the point ran: the host, the Slurm job and array task id ("" under the local
  // launcher), ISO 8601 start and end.
  std::string host, slurm_job_id, slurm_task_id, start_time, end_time;
  // A data-parallel point's ranks (written whole) and its communication medians (unknown for
  // one rank).
  std::optional<double> ranks;
  std::optional<double> exposed_comm_ms, overlap, busbw_gb_per_s;
};

// sweep.csv: the swept keys (dotted, "train.batch_size") and the rows.
struct SweepTable {
  std::vector<std::string> keys;
  std::vector<SweepRow> rows;
};

// The row's metric columns by report name (sweep_metric_names(), rundir/read.h).
std::map<std::string, std::optional<double>> sweep_metrics(const SweepRow& row);

// sweep.csv's text: the header (the keys, then sweep_columns()) and a line per row.
std::string sweep_csv_text(const SweepTable& table);

// Reads sweep.csv at path. Throws DataError for an unreadable file, one without `repeat`, or a
// malformed cell (naming the file and line); a last row cut short is left out into warnings.
SweepTable read_sweep_csv(const std::string& path, std::vector<InputWarning>& warnings);

}  // namespace llmprof::rundir
