// The torch-free half of the all-reduce benchmark (llmprof/dist/comm_bench.h): message sizes and
// nccl-tests' bandwidth arithmetic.
#include "llmprof/dist/comm_bench.h"

#include <fmt/format.h>

#include "llmprof/error.h"

namespace llmprof::dist {

namespace {
constexpr int64_t kElementBytes = 4;  // float32, as all_reduce_perf's default -d float
}

std::vector<int64_t> comm_bench_sizes(const CommBenchOptions& o) {
  if (o.min_bytes < kElementBytes) {
    throw UsageError(fmt::format("--min-bytes {}: expected at least {} (one float32)", o.min_bytes,
                                 kElementBytes));
  }
  if (o.max_bytes < o.min_bytes) {
    throw UsageError(fmt::format("--max-bytes {} is below --min-bytes {}", o.max_bytes,
                                 o.min_bytes));
  }
  if (o.factor < 2) throw UsageError(fmt::format("--factor {}: expected 2 or more", o.factor));
  if (o.iters < 1) throw UsageError(fmt::format("--iters {}: expected 1 or more", o.iters));
  if (o.warmup_iters < 0) {
    throw UsageError(fmt::format("--warmup-iters {}: expected 0 or more", o.warmup_iters));
  }
  std::vector<int64_t> sizes;
  for (int64_t b = o.min_bytes; b <= o.max_bytes; b *= o.factor) {
    sizes.push_back(b / kElementBytes * kElementBytes);
    if (b > o.max_bytes / o.factor) break;  // the next size would overflow or pass max
  }
  return sizes;
}

double all_reduce_bus_factor(int world_size) {
  if (world_size <= 1) return 0.0;
  return 2.0 * (world_size - 1) / world_size;
}

void finish_comm_bench(CommBenchResult& result) {
  const double factor = all_reduce_bus_factor(result.world_size);
  result.max_busbw_bytes_per_s.reset();
  result.max_busbw_at_bytes = 0;
  for (CommBenchRow& row : result.rows) {
    row.algbw_bytes_per_s = row.time_us > 0 ? static_cast<double>(row.bytes) / (row.time_us * 1e-6)
                                            : 0.0;
    row.busbw_bytes_per_s = row.algbw_bytes_per_s * factor;
    if (result.world_size > 1 && row.time_us > 0 &&
        (!result.max_busbw_bytes_per_s || row.busbw_bytes_per_s > *result.max_busbw_bytes_per_s)) {
      result.max_busbw_bytes_per_s = row.busbw_bytes_per_s;
      result.max_busbw_at_bytes = row.bytes;
    }
  }
  result.roof_note =
      result.world_size > 1
          ? fmt::format("largest busbw over {} sizes (all-reduce, float32, sum; {} ranks, {})",
                        result.rows.size(), result.world_size, config::name(result.backend))
          : "world size 1: an all-reduce crosses no link, busbw is 0 by definition (no roof)";
}

}  // namespace llmprof::dist
