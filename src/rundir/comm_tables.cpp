// The communication tables of a data-parallel run (rundir/comm_tables.h): writers and readers
// over the column lists of tables_columns.h.
#include "llmprof/rundir/comm_tables.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>

#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "read_util.h"
#include "tables_columns.h"

namespace llmprof::rundir {

namespace {

std::vector<std::string> header(const std::vector<std::string_view>& names) {
  return {names.begin(), names.end()};
}

void add(output::CsvWriter& csv, std::optional<int64_t> v) {
  if (v) {
    csv.add(*v);
  } else {
    csv.add_null();
  }
}

// A table read whole: the parsed file and the index of each named column (all required).
struct Table {
  detail::CsvFile csv;
  std::vector<int> col;
  int64_t i64(size_t row, size_t c) const { return csv.required_integer(row, col[c]); }
  std::optional<int64_t> opt_i64(size_t row, size_t c) const { return csv.integer(row, col[c]); }
  std::optional<double> num(size_t row, size_t c) const { return csv.number(row, col[c]); }
  const std::string& text(size_t row, size_t c) const { return csv.text(row, col[c]); }
};

// Columns from index `optional_from` on may be absent (added later; absent reads as null).
Table open_table(const std::string& path,
                 const std::vector<std::string_view>& names,
                 size_t optional_from = SIZE_MAX) {
  std::vector<InputWarning> warnings;  // a cut last row is dropped
  std::optional<detail::CsvFile> csv = detail::read_run_csv(path, warnings, /*required=*/true);
  Table t{std::move(*csv), {}};
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string n(names[i]);
    t.col.push_back(i < optional_from ? t.csv.require(n) : t.csv.index(n));
  }
  return t;
}

void add_row(output::CsvWriter& csv, const CommRow& r) {
  csv.add(r.rank)
      .add(r.step)
      .add(r.sync_step)
      .add(r.bucket)
      .add(r.bucket_count)
      .add(int64_t{r.first_layout})
      .add(r.bytes)
      .add(r.elements)
      .add(r.dtype)
      .add(r.ready_ns)
      .add(r.launch_ns);
  add(csv, r.end_ns);
  csv.add(r.comm_ms).add(r.backward_ms_at_launch);
  csv.end_row();
}

}  // namespace

std::optional<profile::Phase> parse_step_phase(std::string_view name) {
  const std::optional<profile::Phase> phase = profile::parse_phase(name);
  if (!phase || static_cast<int>(*phase) >= profile::kNumStepPhases) return std::nullopt;
  return phase;
}

const std::vector<std::string_view>& comm_columns() { return columns::kComm; }
const std::vector<std::string_view>& phase_span_columns() { return columns::kPhaseSpans; }
const std::vector<std::string_view>& clock_columns() { return columns::kClocks; }
const std::vector<std::string_view>& collective_columns() { return columns::kCollectives; }
const std::vector<std::string_view>& comm_step_columns() { return columns::kCommSteps; }

// ---------------------------------------------------------------------------------------------
// Writers

struct CommWriter::Impl {
  explicit Impl(const std::string& path) : csv(path, header(columns::kComm)) {}
  output::CsvWriter csv;
};

CommWriter::CommWriter(const std::string& path) : impl_(new Impl(path)) {}
CommWriter::~CommWriter() { delete impl_; }
void CommWriter::write(const CommRow& row) { add_row(impl_->csv, row); }

void write_comm(const std::string& path, const std::vector<CommRow>& rows) {
  output::CsvWriter csv(path, header(columns::kComm), output::CsvMode::kWhole);
  for (const CommRow& r : rows) add_row(csv, r);
  csv.commit();
}

struct PhaseSpanWriter::Impl {
  explicit Impl(const std::string& path) : csv(path, header(columns::kPhaseSpans)) {}
  output::CsvWriter csv;
};

PhaseSpanWriter::PhaseSpanWriter(const std::string& path) : impl_(new Impl(path)) {}
PhaseSpanWriter::~PhaseSpanWriter() { delete impl_; }

void PhaseSpanWriter::write(const PhaseSpanRow& r) {
  impl_->csv.add(r.rank)
      .add(r.step)
      .add(profile::phase_name(r.phase))
      .add(r.start_ns)
      .add(r.end_ns);
  impl_->csv.end_row();
}

void write_clocks(const std::string& path, const std::vector<ClockRow>& rows) {
  output::CsvWriter csv(path, header(columns::kClocks), output::CsvMode::kWhole);
  for (const ClockRow& r : rows) {
    csv.add(r.rank)
        .add(r.rounds)
        .add(r.start_at_ns)
        .add(r.start_offset_ns)
        .add(r.start_residual_ns);
    add(csv, r.end_at_ns);
    add(csv, r.end_offset_ns);
    add(csv, r.end_residual_ns);
    csv.add(r.drift_ns_per_s);
    csv.add(r.drift_uncertainty_ns_per_s);
    csv.end_row();
  }
  csv.commit();
}

void write_collectives(const std::string& path, const std::vector<CollectiveRow>& rows) {
  output::CsvWriter csv(path, header(columns::kCollectives), output::CsvMode::kWhole);
  for (const CollectiveRow& r : rows) {
    csv.add(r.step)
        .add(r.bucket)
        .add(r.rank)
        .add(int64_t{r.first_layout})
        .add(r.bytes)
        .add(r.elements)
        .add(r.dtype)
        .add(r.launch_aligned_ns);
    add(csv, r.end_aligned_ns);
    csv.add(r.duration_ms)
        .add(r.wait_ms)
        .add(r.latency_ms)
        .add(r.algbw_gb_per_s)
        .add(r.busbw_gb_per_s)
        .add(r.last_rank)
        .add(r.world_size)
        .add(r.hidden_ms)
        .add(r.exposed_ms);
    csv.end_row();
  }
  csv.commit();
}

void write_comm_steps(const std::string& path, const std::vector<CommStepRow>& rows) {
  output::CsvWriter csv(path, header(columns::kCommSteps), output::CsvMode::kWhole);
  for (const CommStepRow& r : rows) {
    csv.add(r.step)
        .add(r.rank)
        .add(int64_t{r.first_layout})
        .add(r.start_aligned_ns)
        .add(r.step_ms)
        .add(r.compute_ms)
        .add(r.exposed_comm_ms)
        .add(r.other_ms)
        .add(r.idle_ms)
        .add(r.comm_ms)
        .add(r.hidden_comm_ms)
        .add(r.overlap)
        .add(r.data_ms)
        .add(r.forward_ms)
        .add(r.backward_ms)
        .add(r.backward_compute_ms)
        .add(r.optimizer_ms)
        .add(r.launch_lag_ms)
        .add(r.last_launches)
        .add(r.buckets);
    csv.end_row();
  }
  csv.commit();
}

// ---------------------------------------------------------------------------------------------
// Readers

std::vector<CommRow> read_comm(const std::string& path) {
  const Table t = open_table(path, columns::kComm);
  std::vector<CommRow> out;
  for (size_t i = 0; i < t.csv.rows.size(); ++i) {
    CommRow r;
    r.rank = t.i64(i, 0);
    r.step = t.i64(i, 1);
    r.sync_step = t.i64(i, 2);
    r.bucket = t.i64(i, 3);
    r.bucket_count = t.i64(i, 4);
    r.first_layout = t.i64(i, 5) != 0;
    r.bytes = t.i64(i, 6);
    r.elements = t.i64(i, 7);
    r.dtype = t.text(i, 8);
    r.ready_ns = t.i64(i, 9);
    r.launch_ns = t.i64(i, 10);
    r.end_ns = t.opt_i64(i, 11);
    r.comm_ms = t.num(i, 12);
    r.backward_ms_at_launch = t.num(i, 13);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<PhaseSpanRow> read_phase_spans(const std::string& path) {
  const Table t = open_table(path, columns::kPhaseSpans);
  std::vector<PhaseSpanRow> out;
  for (size_t i = 0; i < t.csv.rows.size(); ++i) {
    const std::optional<profile::Phase> phase = parse_step_phase(t.text(i, 2));
    if (!phase) {
      throw DataError(
          fmt::format("{} line {}: phase '{}': expected data, forward, backward or "
                      "optimizer",
                      path, t.csv.lines[i], t.text(i, 2)));
    }
    out.push_back({t.i64(i, 0), t.i64(i, 1), *phase, t.i64(i, 3), t.i64(i, 4)});
  }
  return out;
}

std::vector<ClockRow> read_clocks(const std::string& path) {
  const Table t = open_table(path, columns::kClocks, /*optional_from=*/9);  // the uncertainty
  std::vector<ClockRow> out;
  for (size_t i = 0; i < t.csv.rows.size(); ++i) {
    out.push_back({t.i64(i, 0), t.i64(i, 1), t.i64(i, 2), t.i64(i, 3), t.i64(i, 4), t.opt_i64(i, 5),
                   t.opt_i64(i, 6), t.opt_i64(i, 7), t.num(i, 8), t.num(i, 9)});
  }
  return out;
}

std::vector<CollectiveRow> read_collectives(const std::string& path) {
  const Table t = open_table(path, columns::kCollectives, /*optional_from=*/16);  // hidden, exposed
  std::vector<CollectiveRow> out;
  for (size_t i = 0; i < t.csv.rows.size(); ++i) {
    CollectiveRow r;
    r.step = t.i64(i, 0);
    r.bucket = t.i64(i, 1);
    r.rank = t.i64(i, 2);
    r.first_layout = t.i64(i, 3) != 0;
    r.bytes = t.i64(i, 4);
    r.elements = t.i64(i, 5);
    r.dtype = t.text(i, 6);
    r.launch_aligned_ns = t.i64(i, 7);
    r.end_aligned_ns = t.opt_i64(i, 8);
    r.duration_ms = t.num(i, 9);
    r.wait_ms = t.num(i, 10);
    r.latency_ms = t.num(i, 11);
    r.algbw_gb_per_s = t.num(i, 12);
    r.busbw_gb_per_s = t.num(i, 13);
    r.last_rank = t.i64(i, 14);
    r.world_size = t.i64(i, 15);
    r.hidden_ms = t.num(i, 16);
    r.exposed_ms = t.num(i, 17);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<CommStepRow> read_comm_steps(const std::string& path) {
  const Table t = open_table(path, columns::kCommSteps);
  std::vector<CommStepRow> out;
  const auto req = [&](size_t i, size_t c) { return t.csv.required_number(i, t.col[c]); };
  for (size_t i = 0; i < t.csv.rows.size(); ++i) {
    CommStepRow r;
    r.step = t.i64(i, 0);
    r.rank = t.i64(i, 1);
    r.first_layout = t.i64(i, 2) != 0;
    r.start_aligned_ns = t.i64(i, 3);
    r.step_ms = req(i, 4);
    r.compute_ms = req(i, 5);
    r.exposed_comm_ms = req(i, 6);
    r.other_ms = req(i, 7);
    r.idle_ms = req(i, 8);
    r.comm_ms = req(i, 9);
    r.hidden_comm_ms = req(i, 10);
    r.overlap = t.num(i, 11);
    r.data_ms = req(i, 12);
    r.forward_ms = req(i, 13);
    r.backward_ms = req(i, 14);
    r.backward_compute_ms = req(i, 15);
    r.optimizer_ms = req(i, 16);
    r.launch_lag_ms = t.num(i, 17);
    r.last_launches = t.i64(i, 18);
    r.buckets = t.i64(i, 19);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace llmprof::rundir
