// The communication tables of a data-parallel run: per rank, rank<k>/comm.csv (one row per
// bucket all-reduce, that rank's clock) and rank<k>/phases.csv (one row per timed phase span,
// that rank's clock); at the top, written by rank 0 after the run, clocks.csv (each rank's clock
// against rank 0's), collectives.csv (one row per collective and rank, on rank 0's clock) and
// comm_steps.csv (one row per step and rank: the temporal breakdown). Times ending in _ns are raw
// steady-clock nanoseconds; _aligned_ns are on rank 0's clock; durations are in ms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/profile/phase.h"

namespace llmprof::rundir {

// A data-parallel step's phases are profile::Phase's step phases (data, forward, backward,
// optimizer: profile::kNumStepPhases), written by profile::phase_name (phases.csv, the
// straggler's phase). Reads one of those four back; nullopt for any other name, eval included.
std::optional<profile::Phase> parse_step_phase(std::string_view name);

// rank<k>/comm.csv: one bucket's all-reduce. Times on the rank's own clock (ns).
struct CommRow {
  int64_t rank = 0, step = 0, sync_step = 0, bucket = 0, bucket_count = 0;
  bool first_layout = false;
  int64_t bytes = 0, elements = 0;
  std::string dtype;  // f32 | f16 | bf16 | f64 | other
  int64_t ready_ns = 0, launch_ns = 0;
  std::optional<int64_t> end_ns;  // null: the all-reduce failed
  std::optional<double> comm_ms, backward_ms_at_launch;
};
const std::vector<std::string_view>& comm_columns();

// rank<k>/phases.csv: one timed span of one phase of one step (several per phase with
// accumulation). Times on the rank's own clock (ns).
struct PhaseSpanRow {
  int64_t rank = 0, step = 0;
  profile::Phase phase = profile::Phase::kData;  // a step phase (never kEval)
  int64_t start_ns = 0, end_ns = 0;
};
const std::vector<std::string_view>& phase_span_columns();

// clocks.csv: one rank's clock against rank 0's, measured by ping-pong at the start and the end
// of the run (best of `rounds` round trips each). offset = rank's clock - rank 0's clock; the
// residual is half the best round trip (the bound of the estimate's error); drift is the change of
// the offset per second of rank 0's clock between the two measurements, written only when it
// exceeds its uncertainty, (start residual + end residual) / the seconds between them (null with
// one measurement, or below resolution: then the uncertainty says how small the drift is).
struct ClockRow {
  int64_t rank = 0;
  int64_t rounds = 0;
  int64_t start_at_ns = 0;  // rank 0's clock at the start measurement
  int64_t start_offset_ns = 0, start_residual_ns = 0;
  std::optional<int64_t> end_at_ns, end_offset_ns, end_residual_ns;
  std::optional<double> drift_ns_per_s, drift_uncertainty_ns_per_s;
};
const std::vector<std::string_view>& clock_columns();

// collectives.csv: one all-reduce (step, bucket) as one rank saw it, on rank 0's clock. latency
// is the shortest duration across ranks (the transfer, without waiting for a late rank: TraceLens);
// wait = latest launch across ranks - this rank's launch; algbw = bytes / latency; busbw = algbw x
// 2(n-1)/n (all-reduce, nccl-tests). The per-collective figures repeat on each rank's row.
struct CollectiveRow {
  int64_t step = 0, bucket = 0, rank = 0;
  bool first_layout = false;
  int64_t bytes = 0, elements = 0;
  std::string dtype;
  int64_t launch_aligned_ns = 0;
  std::optional<int64_t> end_aligned_ns;
  std::optional<double> duration_ms, wait_ms, latency_ms, algbw_gb_per_s, busbw_gb_per_s;
  int64_t last_rank = 0;  // the rank that launched it last
  int64_t world_size = 0;
  // This rank's all-reduce split by its own compute: hidden_ms under compute (forward, backward's
  // autograd, optimizer), exposed_ms the rest (hidden + exposed = duration). Null when it failed,
  // or in a file from before these columns.
  std::optional<double> hidden_ms, exposed_ms;
};
const std::vector<std::string_view>& collective_columns();

// comm_steps.csv: one step on one rank. step_ms is the span from the step's first phase start
// to its last phase end, split exactly into compute (forward, backward's autograd up to its last
// bucket handed over, optimizer), exposed_comm (all-reduce running and no compute), other (inside
// a phase, neither: data loading, waiting for the reducer) and idle (between phases):
// compute_ms + exposed_comm_ms + other_ms + idle_ms = step_ms. comm_ms is the union of the
// all-reduce intervals, hidden_comm_ms its part under compute, overlap = hidden / comm (null
// without communication). *_phase_ms: each phase's summed spans (backward_compute_ms without the
// wait for the last all-reduce). launch_lag_ms: the mean over the step's buckets of this rank's
// launch minus the earliest launch across ranks (aligned clock); last_launches: how many of the
// step's buckets this rank launched last.
struct CommStepRow {
  int64_t step = 0, rank = 0;
  bool first_layout = false;
  int64_t start_aligned_ns = 0;
  double step_ms = 0, compute_ms = 0, exposed_comm_ms = 0, other_ms = 0, idle_ms = 0;
  double comm_ms = 0, hidden_comm_ms = 0;
  std::optional<double> overlap;
  double data_ms = 0, forward_ms = 0, backward_ms = 0, backward_compute_ms = 0, optimizer_ms = 0;
  std::optional<double> launch_lag_ms;
  int64_t last_launches = 0, buckets = 0;
};
const std::vector<std::string_view>& comm_step_columns();

// Writers: whole files (tmp + rename), except CommWriter and PhaseSpanWriter, which append rows
// flushed as they are written (a killed rank keeps its finished steps). Throw IoError.
class CommWriter {
 public:
  explicit CommWriter(const std::string& path);
  ~CommWriter();
  CommWriter(const CommWriter&) = delete;
  CommWriter& operator=(const CommWriter&) = delete;
  void write(const CommRow& row);

 private:
  struct Impl;
  Impl* impl_;
};
// A whole comm.csv: the top directory's, every rank's rows in rank order.
void write_comm(const std::string& path, const std::vector<CommRow>& rows);
class PhaseSpanWriter {
 public:
  explicit PhaseSpanWriter(const std::string& path);
  ~PhaseSpanWriter();
  void write(const PhaseSpanRow& row);

 private:
  struct Impl;
  Impl* impl_;
};
void write_clocks(const std::string& path, const std::vector<ClockRow>& rows);
void write_collectives(const std::string& path, const std::vector<CollectiveRow>& rows);
void write_comm_steps(const std::string& path, const std::vector<CommStepRow>& rows);

// Readers; a missing file or a malformed row throws DataError naming the file and line. A last
// row cut short (a killed rank) is dropped.
std::vector<CommRow> read_comm(const std::string& path);
std::vector<PhaseSpanRow> read_phase_spans(const std::string& path);
std::vector<ClockRow> read_clocks(const std::string& path);
std::vector<CollectiveRow> read_collectives(const std::string& path);
std::vector<CommStepRow> read_comm_steps(const std::string& path);

}  // namespace llmprof::rundir
