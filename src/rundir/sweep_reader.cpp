// load_sweep: sweep.csv (read through its column table, sweep_table.cpp) into typed points, each
// point's run directory resolved; sweep.json's status (rundir/sweep_doc.h) says whether the sweep
// finished.
#include <filesystem>
#include <utility>

#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/sweep_doc.h"
#include "llmprof/rundir/sweep_table.h"
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
  SweepTable table = read_sweep_csv(path(dir, kSweepCsv), sweep.warnings);
  fs::path name = p.filename().empty() ? p.parent_path().filename() : p.filename();
  sweep.label = name.string();
  sweep.keys = std::move(table.keys);
  for (SweepRow& row : table.rows) {
    if (row.energy_estimated.value_or(false)) sweep.energy_estimated = true;
    SweepPoint pt;
    pt.key_values = std::move(row.key_values);
    pt.repeat = row.repeat;
    pt.point_id = row.point_id;
    pt.skipped = row.status == config::PointStatus::kSkipped;
    if (row.status && !pt.skipped) {
      pt.status = config::find_enum<config::RunStatus>(config::name(*row.status));
    }
    pt.exit_code = row.exit_code;
    pt.metrics = sweep_metrics(row);
    pt.run_dir = resolve_run_dir(p, row.run_dir, pt.point_id);
    sweep.points.push_back(std::move(pt));
  }
  return sweep;
}

}  // namespace llmprof::rundir
