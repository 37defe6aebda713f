// All-reduce bus bandwidth over message sizes, as nccl-tests' all_reduce_perf measures it: per
// size, warm-up iterations, then timed ones; time = the mean over ranks of each rank's mean
// iteration time; algbw = bytes / time; busbw = algbw x 2(n-1)/n (ring all-reduce: each byte
// crosses 2(n-1)/n links, so busbw is comparable across world sizes and with the link's speed).
// The largest busbw over the sizes is the roof that a run's gradient buckets are judged against
// (`llmprof peak --comm`; profile.peak_busbw_bytes_per_s). The sizes and the arithmetic are
// torch-free; run_all_reduce_bench is in comm_bench_torch.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/dist/process_group.h"

namespace llmprof::dist {

struct CommBenchOptions {
  int64_t min_bytes = int64_t{4} << 10;    // 4 KiB, nccl-tests' -b
  int64_t max_bytes = int64_t{256} << 20;  // 256 MiB, nccl-tests' -e
  int64_t factor = 2;                      // each size the previous one x factor (-f)
  int64_t warmup_iters = 5;                // untimed all-reduces per size (-w)
  int64_t iters = 20;                      // timed all-reduces per size (-n)
  int cuda_device = -1;                    // NCCL: the buffers' device; < 0 on the CPU (Gloo)
};

// One message size's figures (float32 elements, sum).
struct CommBenchRow {
  int64_t bytes = 0;
  int64_t elements = 0;
  double time_us = 0;              // mean over ranks of the mean timed iteration
  double min_rank_time_us = 0;     // the fastest rank's mean, the slowest rank's mean
  double max_rank_time_us = 0;
  double algbw_bytes_per_s = 0;    // bytes / time
  double busbw_bytes_per_s = 0;    // algbw x 2(n-1)/n; 0 at world size 1 (nothing crosses a link)
};

struct CommBenchResult {
  int world_size = 1;
  config::DdpBackend backend = config::DdpBackend::kGloo;
  CommBenchOptions options;
  std::vector<CommBenchRow> rows;  // by increasing size
  // The roof: the largest busbw over the sizes and the size it was reached at; nullopt at world
  // size 1 (busbw is 0 there by definition), with the reason in roof_note.
  std::optional<double> max_busbw_bytes_per_s;
  int64_t max_busbw_at_bytes = 0;
  std::string roof_note;
};

// The message sizes min, min x factor, ... up to max (inclusive), each rounded down to a whole
// number of float32 elements. Throws UsageError naming the option for min < 4, max < min,
// factor < 2, iters < 1 or warmup_iters < 0.
std::vector<int64_t> comm_bench_sizes(const CommBenchOptions& options);

// nccl-tests' all-reduce bus bandwidth factor, 2(n-1)/n (0 for n = 1).
double all_reduce_bus_factor(int world_size);

// Fills algbw, busbw and the roof of `result` from the rows' bytes and times.
void finish_comm_bench(CommBenchResult& result);

// Runs the benchmark on every rank of `group` (collective: all ranks call it with the same
// options); every rank returns the same result. A world size of 1 needs a c10d group
// (GroupOptions::c10d_for_one_rank). Throws DistError when a collective fails.
CommBenchResult run_all_reduce_bench(ProcessGroup& group, const CommBenchOptions& options);

}  // namespace llmprof::dist
