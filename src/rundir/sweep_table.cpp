// sweep.csv's one column table: each column's name, how its cell is written from a SweepRow and
// how it is read back. The writer (sweep_csv_text) and the reader (read_sweep_csv, through
// table_reader.h) both walk it, so the names are spelled once.
#include "llmprof/rundir/sweep_table.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string_view>
#include <utility>

#include "llmprof/output/csv.h"
#include "llmprof/rundir/read.h"
#include "read_util.h"
#include "table_reader.h"

namespace llmprof::rundir {

namespace {

using detail::CsvFile;
using detail::Need;

// One sweep.csv column.
struct SweepColumn {
  std::string_view name;  // as written
  // A metric column's report name (sweep_metric_names()) and field; "" and null elsewhere. Where
  // the metric's name differs from `name` (step_ms, train_loss, val_loss, val_perplexity: the
  // contract's names), a header that has it is read from that column, else from `name`.
  std::string_view metric;
  std::optional<double> SweepRow::*value = nullptr;
  Need need = Need::kOptional;
  std::function<std::string(const SweepRow&)> write;
  std::function<void(SweepRow&, const CsvFile&, size_t row, int col)> read;
};

// A number cell: fmt's shortest form; unknown is empty, never 0. `whole` columns (exit code,
// bytes, ranks) print an integral value without exponent, as the int64 they came from.
std::string sweep_number_cell(const std::optional<double>& v, bool whole) {
  if (!v) return {};
  if (whole && std::trunc(*v) == *v && std::fabs(*v) < 9.2e18) {
    return fmt::format("{}", static_cast<int64_t>(*v));
  }
  return fmt::format("{}", *v);
}

// A column that is no metric, its cell written by write(row) and read by read(row, csv, r, col).
template <typename Write, typename Read>
SweepColumn sweep_custom(std::string_view name, Need need, Write write, Read read) {
  return {name, {}, nullptr, need, write, read};
}

SweepColumn sweep_number(std::string_view name,
                         std::string_view metric,
                         std::optional<double> SweepRow::*f,
                         bool whole = false) {
  SweepColumn column = sweep_custom(
      name, Need::kOptional,
      [f, whole](const SweepRow& r) { return sweep_number_cell(r.*f, whole); },
      [f](SweepRow& r, const CsvFile& c, size_t row, int col) { r.*f = c.number(row, col); });
  column.metric = metric;
  column.value = f;
  return column;
}

SweepColumn sweep_text(std::string_view name, std::string SweepRow::*f) {
  return sweep_custom(
      name, Need::kOptional, [f](const SweepRow& r) { return r.*f; },
      [f](SweepRow& r, const CsvFile& c, size_t row, int col) { r.*f = c.text(row, col); });
}

// Names that older sweep.csv files gave a status, and the status each meant ("ok": the
// contract's first name for completed).
constexpr std::pair<std::string_view, config::RunStatus> kOlderStatusNames[] = {
    {"ok", config::RunStatus::kCompleted}};

// A status cell: empty -> nullopt; an older name -> its status; "skipped" (a point the sweep did
// not run: a --plan sweep's point predicted not to fit); a name outside RunStatus's table ->
// DataError naming the file, the line and the value.
std::optional<config::PointStatus> point_status(const CsvFile& csv, size_t row, int col) {
  const std::string& text = csv.text(row, col);
  if (text.empty()) return std::nullopt;
  if (text == config::name(config::PointStatus::kSkipped)) return config::PointStatus::kSkipped;
  for (const auto& [older, status] : kOlderStatusNames) {
    if (text == older) return config::point_status(status);
  }
  return config::point_status(parse_name<config::RunStatus>(
      text, fmt::format("{} line {}", csv.path, csv.lines[row]), "status"));
}

// The columns after the swept keys, in file order.
const std::vector<SweepColumn>& sweep_table() {
  static const std::vector<SweepColumn> kTable = {
      sweep_custom(
          "repeat", Need::kColumn, [](const SweepRow& r) { return std::to_string(r.repeat); },
          [](SweepRow& r, const CsvFile& c, size_t row, int col) {
            r.repeat = c.integer(row, col).value_or(0);
          }),
      sweep_text("point_id", &SweepRow::point_id),
      sweep_custom(
          "status", Need::kOptional,
          [](const SweepRow& r) { return r.status ? std::string(config::name(*r.status)) : ""; },
          [](SweepRow& r, const CsvFile& c, size_t row, int col) {
            r.status = point_status(c, row, col);
          }),
      sweep_number("exit_code", {}, &SweepRow::exit_code, true),
      sweep_number("median_step_ms", "step_ms", &SweepRow::median_step_ms),
      sweep_number("tokens_per_s", "tokens_per_s", &SweepRow::tokens_per_s),
      sweep_number("mfu", "mfu", &SweepRow::mfu),
      sweep_number("final_train_loss", "train_loss", &SweepRow::final_train_loss),
      sweep_number("final_val_loss", "val_loss", &SweepRow::final_val_loss),
      sweep_number("final_val_perplexity", "val_perplexity", &SweepRow::final_val_perplexity),
      sweep_number("peak_rss_bytes", "peak_rss_bytes", &SweepRow::peak_rss_bytes, true),
      sweep_number("energy_j", "energy_j", &SweepRow::energy_j),
      sweep_custom(
          "energy_estimated", Need::kOptional,
          [](const SweepRow& r) {
            return std::string(r.energy_estimated ? (*r.energy_estimated ? "1" : "0") : "");
          },
          [](SweepRow& r, const CsvFile& c, size_t row, int col) {
            const std::string& text = c.text(row, col);
            r.energy_estimated = text.empty() ? std::nullopt : std::optional<bool>(text == "1");
          }),
      sweep_text("run_dir", &SweepRow::run_dir),
      sweep_text("host", &SweepRow::host),
      sweep_text("slurm_job_id", &SweepRow::slurm_job_id),
      sweep_text("slurm_task_id", &SweepRow::slurm_task_id),
      sweep_text("start_time", &SweepRow::start_time),
      sweep_text("end_time", &SweepRow::end_time),
      sweep_number("ranks", "ranks", &SweepRow::ranks, true),
      sweep_number("exposed_comm_ms", "exposed_comm_ms", &SweepRow::exposed_comm_ms),
      sweep_number("overlap", "overlap", &SweepRow::overlap),
      sweep_number("busbw_gb_per_s", "busbw_gb_per_s", &SweepRow::busbw_gb_per_s)};
  return kTable;
}

void add_sweep_line(std::string& text, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) text += ',';
    output::append_csv_field(text, cells[i]);
  }
  text += '\n';
}

}  // namespace

const std::vector<std::string>& sweep_columns() {
  static const std::vector<std::string> kColumns = [] {
    std::vector<std::string> names;
    for (const SweepColumn& c : sweep_table()) names.emplace_back(c.name);
    return names;
  }();
  return kColumns;
}

const std::vector<std::string>& sweep_metric_names() {
  static const std::vector<std::string> kMetrics = [] {
    std::vector<std::string> names;
    for (const SweepColumn& c : sweep_table()) {
      if (!c.metric.empty()) names.emplace_back(c.metric);
    }
    return names;
  }();
  return kMetrics;
}

std::map<std::string, std::optional<double>> sweep_metrics(const SweepRow& row) {
  std::map<std::string, std::optional<double>> out;
  for (const SweepColumn& c : sweep_table()) {
    if (!c.metric.empty()) out[std::string(c.metric)] = row.*c.value;
  }
  return out;
}

std::string sweep_csv_text(const SweepTable& table) {
  std::string text;
  std::vector<std::string> cells = table.keys;
  for (const std::string& name : sweep_columns()) cells.push_back(name);
  add_sweep_line(text, cells);
  for (const SweepRow& row : table.rows) {
    cells = row.key_values;
    for (const SweepColumn& c : sweep_table()) cells.push_back(c.write(row));
    add_sweep_line(text, cells);
  }
  return text;
}

SweepTable read_sweep_csv(const std::string& path, std::vector<InputWarning>& warnings) {
  const CsvFile csv = *detail::read_run_csv(path, warnings, true);
  const int repeat = csv.require("repeat");
  SweepTable table;
  table.keys.assign(csv.header.begin(), csv.header.begin() + repeat);
  std::vector<detail::ColumnRead<SweepRow>> reads;
  for (const SweepColumn& c : sweep_table()) {
    const bool renamed = !c.metric.empty() && c.metric != c.name;
    reads.push_back({renamed ? c.metric : c.name, c.need, renamed ? c.name : "", c.read});
  }
  table.rows = detail::read_rows(csv, reads);
  for (size_t r = 0; r < table.rows.size(); ++r) {
    for (int c = 0; c < repeat; ++c) table.rows[r].key_values.push_back(csv.text(r, c));
  }
  return table;
}

}  // namespace llmprof::rundir
