// load_sweep: sweep.csv into typed points, each point's run directory resolved; sweep.json's
// status (rundir/sweep_doc.h) says whether the sweep finished.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <utility>

#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/sweep_doc.h"
#include "read_util.h"

namespace fs = std::filesystem;

namespace llmprof::rundir {

namespace {

std::string resolve_run_dir(const fs::path& sweep_dir,
                            const std::string& written,
                            const std::string& point_id) {
  std::vector<fs::path> candidates;
  if (!written.empty()) {
    fs::path w(written);
    candidates.push_back(w);
    if (w.is_relative()) candidates.push_back(sweep_dir / w);
    candidates.push_back(sweep_dir / kSweepRuns / w.filename());
  }
  if (!point_id.empty()) candidates.push_back(sweep_dir / kSweepRuns / point_id);
  for (const auto& c : candidates) {
    if (fs::exists(c / kSteps)) return c.string();
  }
  return {};
}

}  // namespace

const std::vector<std::string>& sweep_columns() {
  static const std::vector<std::string> kColumns = {
      "repeat", "point_id", "status", "exit_code", "median_step_ms", "tokens_per_s", "mfu",
      "final_train_loss", "final_val_loss", "final_val_perplexity", "peak_rss_bytes", "energy_j",
      "energy_estimated", "run_dir",
      // Where and when the point ran: the host, the Slurm job and array task id (empty under the
      // local launcher), ISO 8601 start and end.
      "host", "slurm_job_id", "slurm_task_id", "start_time", "end_time",
      // A data-parallel point's ranks (tokens_per_s and mfu are then global: all ranks' tokens
      // over the slowest rank's step) and its communication medians (empty for one rank).
      "ranks", "exposed_comm_ms", "overlap", "busbw_gb_per_s"};
  return kColumns;
}

const std::vector<std::string>& sweep_metric_names() {
  static const std::vector<std::string> kMetrics = {
      "step_ms",        "tokens_per_s", "mfu",   "train_loss",      "val_loss", "val_perplexity",
      "peak_rss_bytes", "energy_j",     "ranks", "exposed_comm_ms", "overlap",  "busbw_gb_per_s"};
  return kMetrics;
}

namespace {

// Names that older sweep.csv files gave a status, and the status each meant ("ok": the
// contract's first name for completed).
constexpr std::pair<std::string_view, config::RunStatus> kOlderStatusNames[] = {
    {"ok", config::RunStatus::kCompleted}};

// A sweep.csv status cell: empty -> nullopt; an older name -> its status; a name outside the
// table -> DataError naming the file, the line and the value.
std::optional<config::RunStatus> point_status(const detail::CsvFile& csv, size_t row, int col) {
  const std::string& text = csv.text(row, col);
  if (text.empty()) return std::nullopt;
  for (const auto& [older, status] : kOlderStatusNames) {
    if (text == older) return status;
  }
  return parse_name<config::RunStatus>(text, fmt::format("{} line {}", csv.path, csv.lines[row]),
                                       "status");
}

}  // namespace

Sweep load_sweep(const std::string& dir) {
  fs::path p(dir);
  if (!fs::is_directory(p)) throw DataError(detail::not_a_directory(dir));
  Sweep sweep;
  sweep.dir = dir;
  if (fs::exists(path(dir, kSweepJson))) {
    const SweepDocStatus state = read_sweep_doc_status(path(dir, kSweepJson));
    sweep.status = state.status;
    if (sweep.status == config::SweepState::kSubmitFailed) {  // sbatch refused: no point ever ran
      const std::string note = state.note.empty() ? "" : ": " + state.note;
      sweep.warnings.push_back({"", path(dir, kSweepJson), 0,
                                "status 'submit_failed': sbatch refused the sweep, none of its "
                                "points was queued" + printable(note, 400)});
    } else if (sweep.status && *sweep.status != config::SweepState::kFinished) {
      sweep.warnings.push_back(
          {"", path(dir, kSweepJson), 0,
           "status '" + std::string(config::name(*sweep.status)) +
               "': the sweep is still running, was stopped or was killed; points without a "
               "finished run are missing (run the same llmprof sweep command to finish it)"});
    }
  }
  detail::CsvFile csv = *detail::read_run_csv(path(dir, kSweepCsv), sweep.warnings, true);
  fs::path name = p.filename().empty() ? p.parent_path().filename() : p.filename();
  sweep.label = name.string();
  int repeat = csv.require("repeat");
  for (int c = 0; c < repeat; ++c) sweep.keys.push_back(csv.header[static_cast<size_t>(c)]);
  int point_id = csv.index("point_id"), status = csv.index("status");
  int exit_code = csv.index("exit_code"), run_dir = csv.index("run_dir");
  // `llmprof sweep` writes median_step_ms and final_* names; the contract's short names win.
  static const std::map<std::string, std::string> kAliases = {
      {"step_ms", "median_step_ms"},
      {"train_loss", "final_train_loss"},
      {"val_loss", "final_val_loss"},
      {"val_perplexity", "final_val_perplexity"}};
  std::vector<int> metric_cols;
  for (const auto& m : sweep_metric_names()) {
    int col = csv.index(m);
    auto alias = kAliases.find(m);
    if (col < 0 && alias != kAliases.end()) col = csv.index(alias->second);
    metric_cols.push_back(col);
  }
  const int estimated = csv.index("energy_estimated");
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    if (estimated >= 0 && csv.text(r, estimated) == "1") sweep.energy_estimated = true;
    SweepPoint pt;
    for (int c = 0; c < repeat; ++c) pt.key_values.push_back(csv.text(r, c));
    pt.repeat = csv.integer(r, repeat).value_or(0);
    pt.point_id = csv.text(r, point_id);
    pt.status = point_status(csv, r, status);
    pt.exit_code = csv.number(r, exit_code);
    for (size_t m = 0; m < metric_cols.size(); ++m) {
      pt.metrics[sweep_metric_names()[m]] = csv.number(r, metric_cols[m]);
    }
    pt.run_dir = resolve_run_dir(p, csv.text(r, run_dir), pt.point_id);
    sweep.points.push_back(std::move(pt));
  }
  return sweep;
}

}  // namespace llmprof::rundir
