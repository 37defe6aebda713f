// The all-reduce benchmark's measurement (llmprof/dist/comm_bench.h) on the group's c10d backend.
#include <torch/torch.h>

#include "c10d_compat.h"
#include "llmprof/base/clock.h"
#include "llmprof/dist/comm_bench.h"

namespace llmprof::dist {

namespace {

#if LLMPROF_WITH_DIST
// Waits for the device's queued work (NCCL runs on its own stream; wait() only orders streams).
void device_sync(const CommBenchOptions& options) {
#if LLMPROF_DIST_NCCL
  if (options.cuda_device >= 0) c10::cuda::device_synchronize();  // sync: the timed boundary
#else
  (void)options;
#endif
}

// This rank's mean time of one all-reduce of `bytes`, in microseconds: warm-up, then `iters`
// all-reduces issued back to back and waited for together (all_reduce_perf's timing loop).
double time_all_reduce(compat::PgPtr& pg, int64_t bytes, const CommBenchOptions& options) {
  auto tensor_options = torch::TensorOptions().dtype(torch::kFloat32);
  if (options.cuda_device >= 0) {
    tensor_options = tensor_options.device(torch::Device(torch::kCUDA, options.cuda_device));
  }
  std::vector<at::Tensor> buffer{torch::zeros({bytes / 4}, tensor_options)};
  for (int64_t i = 0; i < options.warmup_iters; ++i) pg->allreduce(buffer)->wait();
  device_sync(options);
  pg->barrier()->wait();  // every rank starts the timed loop together
  std::vector<decltype(pg->allreduce(buffer))> works;  // ProcessGroup::Work (1.13), Work (2.x)
  works.reserve(static_cast<size_t>(options.iters));
  const int64_t t0 = now_ns();
  for (int64_t i = 0; i < options.iters; ++i) works.push_back(pg->allreduce(buffer));
  for (auto& w : works) w->wait();
  device_sync(options);
  const int64_t t1 = now_ns();
  return static_cast<double>(t1 - t0) * 1e-3 / static_cast<double>(options.iters);
}
#endif

}  // namespace

CommBenchResult run_all_reduce_bench(ProcessGroup& group, const CommBenchOptions& options) {
  const std::vector<int64_t> sizes = comm_bench_sizes(options);
  CommBenchResult result;
  result.world_size = group.world_size();
  result.backend = group.backend();
  result.options = options;
#if LLMPROF_WITH_DIST
  auto* pg = static_cast<compat::PgPtr*>(group.native_handle());
  if (pg == nullptr) {
    throw DistError("the all-reduce benchmark needs a c10d group (world size 1 without "
                    "GroupOptions::c10d_for_one_rank)", -1, kExitUsage);
  }
  std::vector<double> mine;
  for (int64_t bytes : sizes) {
    try {
      mine.push_back(time_all_reduce(*pg, bytes, options));
    } catch (const DistError&) {
      throw;
    } catch (const std::exception& e) {
      throw group.diagnose(e, "all-reduce benchmark");
    }
  }
  // Every rank's times: time = their mean (nccl-tests averages over ranks), min and max beside.
  const std::vector<double> all = group.all_gather(mine);
  const int n = result.world_size;
  for (size_t i = 0; i < sizes.size(); ++i) {
    CommBenchRow row;
    row.bytes = sizes[i];
    row.elements = sizes[i] / 4;
    double sum = 0;
    row.min_rank_time_us = row.max_rank_time_us = all[i];
    for (int r = 0; r < n; ++r) {
      const double t = all[static_cast<size_t>(r) * sizes.size() + i];
      sum += t;
      row.min_rank_time_us = std::min(row.min_rank_time_us, t);
      row.max_rank_time_us = std::max(row.max_rank_time_us, t);
    }
    row.time_us = sum / n;
    result.rows.push_back(row);
  }
  finish_comm_bench(result);
  return result;
#else
  (void)sizes;
  throw DistError("the all-reduce benchmark needs c10d (llmprof was built without it)", -1,
                  kExitUsage);
#endif
}

}  // namespace llmprof::dist
