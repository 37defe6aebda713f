#include "results.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llmprof/base/numbers.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/process/child.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/sweep_table.h"

namespace llmprof::sweep {

bool is_final_status(config::PointStatus status) {
  return status == config::PointStatus::kCompleted || status == config::PointStatus::kDiverged;
}

PointCounts count_points(const std::vector<PointResult>& results) {
  PointCounts c;
  for (const PointResult& r : results) {
    c.completed += r.status == config::PointStatus::kCompleted;
    c.diverged += r.status == config::PointStatus::kDiverged;
    c.failed += r.status == config::PointStatus::kFailed;
    c.interrupted += r.status == config::PointStatus::kInterrupted;
  }
  return c;
}

bool read_summary(const std::string& run_dir, PointResult& r) {
  std::vector<rundir::InputWarning> warnings;  // an empty summary.json: no outcome
  std::optional<rundir::Summary> s;
  try {
    s = rundir::read_summary(rundir::path(run_dir, rundir::kSummary), warnings);
  } catch (const DataError&) {  // half-written or damaged: the point runs again
    return false;
  }
  if (!s || !s->status) return false;
  r.status = config::point_status(*s->status);
  r.message = s->message;
  r.median_step_ms = s->median_step_ms();
  r.tokens_per_s = s->median_tokens_per_s();
  r.mfu = s->median_mfu();
  if (s->loss && s->loss->eval) {
    r.final_train_loss = s->loss->eval->train_loss;
    r.final_val_loss = s->loss->eval->val_loss;
    r.final_val_perplexity = s->loss->eval->val_perplexity;
  }
  r.peak_rss_bytes = s->peak_rss_bytes;
  r.energy_j = s->energy ? s->energy->total_j : std::nullopt;
  r.energy_estimated = s->energy && s->energy->estimated;
  if (s->distributed && !s->distributed->rank) {
    r.ranks = std::max<int64_t>(1, s->distributed->world_size);
    if (const auto& c = s->distributed->comm) {
      r.exposed_comm_ms = c->exposed_comm_ms_median;
      r.overlap = c->overlap;
      r.busbw_gb_per_s = c->busbw_gb_per_s_median;
    }
  }
  return true;
}

std::string last_error_line(const std::string& log_path) {
  std::ifstream in(log_path, std::ios::binary);
  std::string line, last_error, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    last = line;
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("error") != std::string::npos || lower.find("terminate") != std::string::npos)
      last_error = line;
  }
  std::string out = last_error.empty() ? last : last_error;
  const std::string prefix = "llmprof: error: ";
  if (out.compare(0, prefix.size(), prefix) == 0) out = out.substr(prefix.size());
  if (out.size() > 300) out = out.substr(0, 297) + "...";
  return out;
}

PointResult finished_result(const std::string& run_dir,
                            const std::string& log_path,
                            int wait_status) {
  PointResult r;
  r.log_path = log_path;
  std::error_code ec;
  if (std::filesystem::is_directory(run_dir, ec)) r.run_dir = run_dir;
  std::string how;
  const process::Exit end = process::exit_of(wait_status);
  if (end.kind == process::Exit::Kind::kKilled) {
    r.signal = end.code;
    r.exit_code = 128 + *r.signal;
    how = fmt::format("killed by signal {} ({})", *r.signal, strsignal(*r.signal));
  } else {
    r.exit_code = end.code;
    how = fmt::format("exit code {}", *r.exit_code);
  }
  if (!r.run_dir.empty() && read_summary(r.run_dir, r)) return r;
  r.status = process::is_stop_request(end) ? config::PointStatus::kInterrupted
                                           : config::PointStatus::kFailed;
  std::string why = last_error_line(log_path);
  r.message = why.empty() ? how + ", no summary.json" : how + ": " + why;
  return r;
}

namespace {

// A point's sweep.csv row, once it has an outcome.
rundir::SweepRow sweep_row(const Point& p, const PointResult& r) {
  rundir::SweepRow row;
  for (const auto& kv : p.values) row.key_values.push_back(kv.second);
  row.repeat = p.repeat;
  row.point_id = p.id;
  row.status = r.status;
  row.exit_code = r.exit_code;
  row.median_step_ms = r.median_step_ms;
  row.tokens_per_s = r.tokens_per_s;
  row.mfu = r.mfu;
  row.final_train_loss = r.final_train_loss;
  row.final_val_loss = r.final_val_loss;
  row.final_val_perplexity = r.final_val_perplexity;
  row.peak_rss_bytes = r.peak_rss_bytes;
  row.energy_j = r.energy_j;
  if (r.energy_j) row.energy_estimated = r.energy_estimated;
  row.run_dir = r.run_dir;
  row.host = r.host;
  row.slurm_job_id = r.slurm_job_id;
  row.slurm_task_id = r.slurm_task_id;
  row.start_time = r.start_time;
  row.end_time = r.end_time;
  row.ranks = static_cast<double>(r.ranks);
  row.exposed_comm_ms = r.exposed_comm_ms;
  row.overlap = r.overlap;
  row.busbw_gb_per_s = r.busbw_gb_per_s;
  return row;
}

}  // namespace

std::string sweep_csv(const Grid& grid,
                      const std::vector<Point>& points,
                      const std::vector<PointResult>& results) {
  rundir::SweepTable table;
  for (const GridAxis& axis : grid) table.keys.push_back(axis.key);
  for (size_t i = 0; i < points.size(); ++i) {
    const config::PointStatus s = results[i].status;
    if (s == config::PointStatus::kPending || s == config::PointStatus::kRunning) {
      continue;  // no outcome yet
    }
    table.rows.push_back(sweep_row(points[i], results[i]));
  }
  return rundir::sweep_csv_text(table);
}

std::string sweep_json(const rundir::SweepContext& info,
                       const std::vector<Point>& points,
                       const std::vector<PointResult>& results) {
  rundir::SweepDoc doc;
  doc.context = info;
  for (size_t i = 0; i < points.size(); ++i) {
    doc.points.push_back({points[i], results[i], results[i].reused});
  }
  return rundir::sweep_doc_text(doc);
}

std::optional<StoredPeak> read_stored_peak(const std::string& sweep_dir) {
  const std::string file = rundir::path(sweep_dir, rundir::kSweepJson);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  rundir::SweepDoc doc;
  try {
    doc = rundir::read_sweep_doc(file);
  } catch (const DataError&) {  // damaged, or from a newer llmprof: measured again
    return std::nullopt;
  }
  const rundir::SweepContext& c = doc.context;
  if (!(c.peak_flops_per_s > 0) || c.peak_source.empty()) return std::nullopt;
  return StoredPeak{c.peak_flops_per_s, c.peak_source, c.peak_measured_at};
}

void write_sweep_files(const rundir::SweepContext& info,
                       const std::vector<Point>& points,
                       const std::vector<PointResult>& results) {
  output::write_file_atomic(rundir::path(info.sweep_dir, rundir::kSweepCsv),
                            sweep_csv(info.grid, points, results));
  output::write_file_atomic(rundir::path(info.sweep_dir, rundir::kSweepJson),
                            sweep_json(info, points, results));
}

}  // namespace llmprof::sweep
