// comm_peak.csv: the all-reduce bus bandwidth table that `llmprof peak --comm --output DIR`
// writes (nccl-tests' all_reduce_perf columns), one row per message size. Its largest busbw is
// the communication roof a run is given as profile.peak_busbw_bytes_per_s (env.json peak_comm).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::rundir {

// Columns: bytes, elements, dtype, world_size, backend, warmup_iters, iters, time_us,
// min_rank_time_us, max_rank_time_us, algbw_gb_per_s, busbw_gb_per_s (GB = 1e9 bytes).
struct CommPeakRow {
  int64_t bytes = 0;
  int64_t elements = 0;
  std::string dtype = "float32";
  int64_t world_size = 1;
  std::string backend;  // "gloo", "nccl"
  int64_t warmup_iters = 0, iters = 0;
  double time_us = 0, min_rank_time_us = 0, max_rank_time_us = 0;
  double algbw_gb_per_s = 0, busbw_gb_per_s = 0;
};

// Written whole (tmp + rename). Throws IoError.
void write_comm_peak(const std::string& path, const std::vector<CommPeakRow>& rows);
// Reads it back; a missing column or bad number throws DataError naming the file and line.
std::vector<CommPeakRow> read_comm_peak(const std::string& path);

}  // namespace llmprof::rundir
