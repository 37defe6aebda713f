// Communication kernels found by the collective that launched them (correlation id -> runtime
// call -> the issue it ran in), whatever their names: a renamed NCCL kernel inside an issue is
// communication, a kernel named like NCCL's launched outside every issue is not.
#include "llmprof/gpu/comm_kernels.h"

#include <gtest/gtest.h>

namespace llmprof::gpu {
namespace {

KernelRecord kernel(const std::string& name, uint32_t correlation) {
  KernelRecord k;
  k.name = name;
  k.correlation_id = correlation;
  k.start_ns = 10'000 + correlation;
  k.end_ns = k.start_ns + 100;
  return k;
}

RuntimeApiRecord launch(uint32_t correlation, int64_t start_ns, uint64_t thread) {
  RuntimeApiRecord r;
  r.name = "cudaLaunchKernel";
  r.correlation_id = correlation;
  r.start_ns = start_ns;
  r.end_ns = start_ns + 5;
  r.thread_id = thread;
  return r;
}

TEST(CollectiveOfKernels, ClassifiesByLaunchingCollectiveNotByName) {
  GpuRecords g;
  g.kernels = {kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1),  // issue 0
               kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 2),   // compute time, NCCL-like name
               kernel("renamed_comm_kernel", 3),                       // issue 1, no NCCL in name
               kernel("gemm", 4),                                      // other thread during issue 1
               kernel("lost", 5)};                                     // no runtime record
  g.runtime = {launch(1, 150, 7), launch(2, 300, 7), launch(3, 580, 7), launch(4, 560, 9)};
  const std::vector<CollectiveIssue> issues = {{500, 600, 7}, {100, 200, 7}};  // any order
  EXPECT_EQ(collective_of_kernels(g, issues), (std::vector<int32_t>{1, -1, 0, -1, -1}));
}

TEST(CollectiveOfKernels, IssueWithoutThreadMatchesAnyThreadAndBoundsAreInclusive) {
  GpuRecords g;
  g.kernels = {kernel("a", 1), kernel("b", 2), kernel("c", 3)};
  g.runtime = {launch(1, 100, 3), launch(2, 200, 4), launch(3, 201, 4)};
  EXPECT_EQ(collective_of_kernels(g, {{100, 200, 0}}), (std::vector<int32_t>{0, 0, -1}));
  EXPECT_EQ(collective_of_kernels(g, {}), (std::vector<int32_t>{-1, -1, -1}));
}

}  // namespace
}  // namespace llmprof::gpu
