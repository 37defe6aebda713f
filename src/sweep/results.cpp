#include "results.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "llmprof/base/numbers.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"

namespace llmprof::sweep {

using output::csv_field;
namespace {

using nlohmann::json;

// The number at j[path...], or nullopt when a step is missing or the value is not a number.
std::optional<double> number_at(const json& j, std::initializer_list<const char*> path) {
  const json* node = &j;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return std::nullopt;
    node = &(*node)[key];
  }
  return node->is_number() ? std::optional<double>(node->get<double>()) : std::nullopt;
}

template <typename T>
nlohmann::ordered_json or_null(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

template <typename T>
std::string csv_number(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string();  // unknown: empty, never 0
}

// Whether a wait status means the process stopped because it was asked to (Ctrl-C, kill).
bool is_stop_request(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    return sig == SIGINT || sig == SIGTERM;
  }
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 130;
}

}  // namespace

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
  if (WIFSIGNALED(wait_status)) {
    r.signal = WTERMSIG(wait_status);
    r.exit_code = 128 + *r.signal;
    how = fmt::format("killed by signal {} ({})", *r.signal, strsignal(*r.signal));
  } else {
    r.exit_code = WEXITSTATUS(wait_status);
    how = fmt::format("exit code {}", *r.exit_code);
  }
  if (!r.run_dir.empty() && read_summary(r.run_dir, r)) return r;
  r.status = is_stop_request(wait_status) ? config::PointStatus::kInterrupted
                                          : config::PointStatus::kFailed;
  std::string why = last_error_line(log_path);
  r.message = why.empty() ? how + ", no summary.json" : how + ": " + why;
  return r;
}

std::string sweep_csv(const Grid& grid,
                      const std::vector<Point>& points,
                      const std::vector<PointResult>& results) {
  std::vector<std::string> header;
  for (const GridAxis& axis : grid) header.push_back(axis.key);
  for (const std::string& c : rundir::sweep_columns()) header.push_back(c);
  std::string text;
  auto add_row = [&text](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) text += (i ? "," : "") + csv_field(fields[i]);
    text += '\n';
  };
  add_row(header);
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const PointResult& r = results[i];
    if (r.status == config::PointStatus::kPending || r.status == config::PointStatus::kRunning) {
      continue;  // no outcome yet
    }
    std::vector<std::string> row;
    for (const auto& kv : p.values) row.push_back(kv.second);
    const std::string status(config::name(r.status));
    for (const std::string& f : {std::to_string(p.repeat), p.id, status, csv_number(r.exit_code),
                                 csv_number(r.median_step_ms), csv_number(r.tokens_per_s),
                                 csv_number(r.mfu), csv_number(r.final_train_loss),
                                 csv_number(r.final_val_loss), csv_number(r.final_val_perplexity),
                                 csv_number(r.peak_rss_bytes), csv_number(r.energy_j),
                                 std::string(r.energy_j ? (r.energy_estimated ? "1" : "0") : ""),
                                 r.run_dir, r.host, r.slurm_job_id, r.slurm_task_id, r.start_time,
                                 r.end_time}) {
      row.push_back(f);
    }
    add_row(row);
  }
  return text;
}

nlohmann::ordered_json info_json(const SweepInfo& info) {
  using ojson = nlohmann::ordered_json;  // keys in the order written: schema_version first
  ojson j;
  j["schema_version"] = rundir::kSweepSchemaVersion;
  j["status"] = std::string(config::name(info.status));
  j["status_note"] = info.status_note.empty() ? ojson(nullptr) : ojson(info.status_note);
  j["launcher"] = info.launcher;
  j["base_config"] = info.base_config;
  j["sweep_dir"] = info.sweep_dir;
  j["workdir"] = info.workdir;
  ojson grid = ojson::array();
  for (const GridAxis& axis : info.grid) {
    grid.push_back({{"key", axis.key}, {"values", axis.values}, {"origin", axis.origin}});
  }
  j["grid"] = grid;
  j["overrides"] = info.overrides;
  j["repeat"] = info.repeat;
  j["jobs"] = info.jobs;
  j["jobs_requested"] = info.jobs_requested;
  j["jobs_policy"] = info.jobs_policy;
  j["threads_per_point"] =
      info.threads_per_point > 0 ? ojson(info.threads_per_point) : ojson(nullptr);
  j["threads_source"] = info.threads_source;
  j["peak_flops_per_s"] = info.peak_flops_per_s > 0 ? ojson(info.peak_flops_per_s) : ojson(nullptr);
  j["peak_source"] = info.peak_source;
  j["peak_measured_at"] =
      info.peak_measured_at.empty() ? ojson(nullptr) : ojson(info.peak_measured_at);
  j["peak_reused"] = info.peak_reused;
  j["cores"] = info.cores;
  j["command_line"] = info.command_line;
  j["start_time"] = info.start_time;
  j["invocation"] = info.invocation;
  j["resume_policy"] =
      "a re-run or re-submission skips points whose summary.json says completed or diverged "
      "(diverged is an outcome of the config); failed, interrupted and unfinished points run "
      "again, their earlier run directory and log renamed to <id>.attempt<N>; a point runs only "
      "under its lock runs/<id>.lock, so no two tasks ever run it at once";
  return j;
}

SweepInfo info_from_json(const json& j, const std::string& file) {
  auto need = [&](const char* key) -> const json& {
    if (!j.is_object() || !j.contains(key)) {
      throw DataError(fmt::format("{}: no '{}' (not written by this llmprof sweep?)", file, key));
    }
    return j[key];
  };
  // An integer field; a float there (say 1e300) would reach a cast past int64's range.
  auto need_int = [&](const char* key) -> int64_t {
    const json& v = need(key);
    if (!v.is_number_integer()) {
      throw DataError(fmt::format("{}: '{}' is not an integer: {}", file, key, printable_json(v)));
    }
    return v.get<int64_t>();
  };
  SweepInfo info;
  try {
    info.status =
        rundir::parse_name<config::SweepState>(need("status").get<std::string>(), file, "status");
    if (j.contains("status_note") && j["status_note"].is_string()) {  // absent before 2026-11
      info.status_note = j["status_note"].get<std::string>();
    }
    info.launcher = need("launcher").get<std::string>();
    info.base_config = need("base_config").get<std::string>();
    info.sweep_dir = need("sweep_dir").get<std::string>();
    info.workdir = need("workdir").get<std::string>();
    for (const json& axis : need("grid")) {
      info.grid.push_back({axis.at("key").get<std::string>(),
                           axis.at("values").get<std::vector<std::string>>(),
                           axis.at("origin").get<std::string>()});
    }
    info.overrides = need("overrides").get<std::vector<std::string>>();
    info.repeat = need_int("repeat");
    info.jobs = need_int("jobs");
    info.jobs_requested = need_int("jobs_requested");
    info.jobs_policy = need("jobs_policy").get<std::string>();
    info.threads_per_point =
        need("threads_per_point").is_null() ? 0 : need_int("threads_per_point");
    info.threads_source = j.value("threads_source", std::string());  // absent before 2026-11
    info.peak_flops_per_s = need("peak_flops_per_s").is_number()
                                ? need("peak_flops_per_s").get<double>()
                                : 0.0;
    info.peak_source = need("peak_source").get<std::string>();
    info.peak_measured_at = need("peak_measured_at").is_string()
                                ? need("peak_measured_at").get<std::string>()
                                : std::string();
    info.peak_reused = need("peak_reused").get<bool>();
    info.cores = need_int("cores");
    info.command_line = need("command_line").get<std::vector<std::string>>();
    info.start_time = need("start_time").get<std::string>();
    info.invocation = need("invocation").get<std::string>();
  } catch (const json::exception& e) {
    throw DataError(fmt::format("{}: malformed sweep context: {}", file, e.what()));
  }
  return info;
}

std::string sweep_json(const SweepInfo& info,
                       const std::vector<Point>& points,
                       const std::vector<PointResult>& results) {
  using ojson = nlohmann::ordered_json;
  ojson j = info_json(info);
  ojson counts = ojson::object();
  ojson pts = ojson::array();
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const PointResult& r = results[i];
    const std::string status(config::name(r.status));
    counts[status] = counts.value(status, 0) + 1;
    ojson values = ojson::object();
    for (const auto& [key, value] : p.values) values[key] = value;
    pts.push_back({{"id", p.id},
                   {"index", p.index},
                   {"repeat", p.repeat},
                   {"values", values},
                   {"status", status},
                   {"exit_code", or_null(r.exit_code)},
                   {"signal", or_null(r.signal)},
                   {"message", r.message.empty() ? ojson(nullptr) : ojson(r.message)},
                   {"run_dir", r.run_dir.empty() ? ojson(nullptr) : ojson(r.run_dir)},
                   {"log", r.log_path},
                   {"duration_s", or_null(r.duration_s)},
                   {"reused", r.reused},
                   {"moved_aside", r.moved_aside},
                   {"host", r.host.empty() ? ojson(nullptr) : ojson(r.host)},
                   {"slurm_job_id", r.slurm_job_id.empty() ? ojson(nullptr) : ojson(r.slurm_job_id)},
                   {"slurm_task_id",
                    r.slurm_task_id.empty() ? ojson(nullptr) : ojson(r.slurm_task_id)},
                   {"start_time", r.start_time.empty() ? ojson(nullptr) : ojson(r.start_time)},
                   {"end_time", r.end_time.empty() ? ojson(nullptr) : ojson(r.end_time)}});
  }
  j["counts"] = counts;
  j["points"] = pts;
  return j.dump(2) + "\n";
}

std::optional<StoredPeak> read_stored_peak(const std::string& sweep_dir) {
  std::ifstream in(rundir::path(sweep_dir, rundir::kSweepJson), std::ios::binary);
  if (!in) return std::nullopt;
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  auto flops = number_at(j, {"peak_flops_per_s"});
  if (!flops || *flops <= 0 || !j["peak_source"].is_string()) return std::nullopt;
  StoredPeak p;
  p.flops_per_s = *flops;
  p.source = j["peak_source"].get<std::string>();
  if (j.contains("peak_measured_at") && j["peak_measured_at"].is_string()) {
    p.measured_at = j["peak_measured_at"].get<std::string>();
  }
  return p;
}

void write_sweep_files(const SweepInfo& info,
                       const std::vector<Point>& points,
                       const std::vector<PointResult>& results) {
  output::write_file_atomic(rundir::path(info.sweep_dir, rundir::kSweepCsv),
                            sweep_csv(info.grid, points, results));
  output::write_file_atomic(rundir::path(info.sweep_dir, rundir::kSweepJson),
                            sweep_json(info, points, results));
}

}  // namespace llmprof::sweep
