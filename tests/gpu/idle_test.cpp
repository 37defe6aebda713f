#include "llmprof/gpu/idle.h"

#include <gtest/gtest.h>

namespace llmprof::gpu {
namespace {

constexpr double kTol = 1e-12;
constexpr int64_t kUs = 1000;  // ns

KernelRecord kernel(int64_t start_us, int64_t end_us, uint32_t stream = 7, int32_t device = 0) {
  KernelRecord k;
  k.name = "k";
  k.start_ns = start_us * kUs;
  k.end_ns = end_us * kUs;
  k.stream = stream;
  k.device = device;
  return k;
}

MemcpyRecord copy(CopyKind kind, int64_t start_us, int64_t end_us) {
  MemcpyRecord m;
  m.kind = kind;
  m.start_ns = start_us * kUs;
  m.end_ns = end_us * kUs;
  return m;
}

RuntimeApiRecord call(const char* name, int64_t start_us, int64_t end_us) {
  return {name, 0, start_us * kUs, end_us * kUs, 100, 0};
}

// Every case: a 100 us step window [0, 100) us, so busy + idle = 0.1 ms.
StepIdle analyze(const GpuRecords& gpu, const std::vector<HostInterval>& data = {}) {
  return analyze_idle(3, 0, 100 * kUs, gpu, data);
}

void expect_consistent(const StepIdle& s) {
  EXPECT_NEAR(s.busy_ms + s.idle_ms, s.window_ms, kTol);
  EXPECT_NEAR(s.host_bound_ms + s.data_bound_ms + s.sync_bound_ms, s.idle_ms, kTol);
}

// Kernels [0, 10) and [20, 100): one 10 us gap, no sync, next work a kernel -> host-bound.
TEST(AnalyzeIdle, GapWithNoSyncOrDataIsHostBound) {
  GpuRecords gpu;
  gpu.kernels = {kernel(0, 10), kernel(20, 100)};
  const StepIdle s = analyze(gpu);
  EXPECT_EQ(s.step, 3);
  EXPECT_NEAR(s.window_ms, 0.100, kTol);
  EXPECT_NEAR(s.busy_ms, 0.090, kTol);
  EXPECT_NEAR(s.host_bound_ms, 0.010, kTol);
  ASSERT_EQ(s.gaps.size(), 1u);
  EXPECT_EQ(s.gaps[0].start_ns, 10 * kUs);
  EXPECT_EQ(s.gaps[0].end_ns, 20 * kUs);
  EXPECT_EQ(s.gaps[0].cause, IdleCause::kHost);
  expect_consistent(s);
}

// Kernels [0, 30) and [50, 100); cudaStreamSynchronize [25, 32) reaches into the gap [30, 50):
// the whole 20 us gap is sync-bound.
TEST(AnalyzeIdle, GapOverlappedBySyncCallIsSyncBound) {
  GpuRecords gpu;
  gpu.kernels = {kernel(0, 30), kernel(50, 100)};
  gpu.runtime = {call("cudaLaunchKernel", 35, 36), call("cudaStreamSynchronize", 25, 32)};
  const StepIdle s = analyze(gpu);
  EXPECT_NEAR(s.sync_bound_ms, 0.020, kTol);
  EXPECT_NEAR(s.host_bound_ms, 0.0, kTol);
  expect_consistent(s);
}

TEST(AnalyzeIdle, HostBlockingSyncRecordIsSyncBoundButStreamWaitIsNot) {
  GpuRecords gpu;
  gpu.kernels = {kernel(0, 30), kernel(50, 100)};
  gpu.syncs = {{SyncType::kStreamWaitEvent, 31 * kUs, 40 * kUs, 7, 1}};
  EXPECT_NEAR(analyze(gpu).host_bound_ms, 0.020, kTol) << "a device-side wait blocks no host";
  gpu.syncs = {{SyncType::kContextSynchronize, 31 * kUs, 40 * kUs, kNoStream, 1}};
  EXPECT_NEAR(analyze(gpu).sync_bound_ms, 0.020, kTol);
}

// The step opens with 40 us of nothing while the CPU data phase runs [0, 35); the first GPU work
// is the batch's HtoD copy [40, 45), then kernels [45, 100): data-bound 40 us.
TEST(AnalyzeIdle, GapBeforeInputCopyDuringDataPhaseIsDataBound) {
  GpuRecords gpu;
  gpu.memcpys = {copy(CopyKind::kHtoD, 40, 45)};
  gpu.kernels = {kernel(45, 100)};
  const StepIdle s = analyze(gpu, {{0, 35 * kUs}});
  EXPECT_NEAR(s.data_bound_ms, 0.040, kTol);
  EXPECT_NEAR(s.busy_ms, 0.060, kTol);
  expect_consistent(s);

  // No data phase overlapping: the same gap is host-bound.
  EXPECT_NEAR(analyze(gpu, {{50 * kUs, 60 * kUs}}).host_bound_ms, 0.040, kTol);
  // A kernel (not an HtoD copy) ends the gap: host-bound even during the data phase.
  gpu.memcpys = {copy(CopyKind::kDtoH, 40, 45)};
  EXPECT_NEAR(analyze(gpu, {{0, 35 * kUs}}).host_bound_ms, 0.040, kTol);
}

// The trailing gap [80, 100) is followed by the next step's input copy at 110 us, beyond the
// window, and the data phase of that batch starts at 85: data-bound.
TEST(AnalyzeIdle, TrailingGapLooksAtTheWorkAfterTheWindow) {
  GpuRecords gpu;
  gpu.kernels = {kernel(0, 80)};
  gpu.memcpys = {copy(CopyKind::kHtoD, 110, 115)};
  EXPECT_NEAR(analyze(gpu, {{85 * kUs, 108 * kUs}}).data_bound_ms, 0.020, kTol);
  EXPECT_NEAR(analyze(gpu).host_bound_ms, 0.020, kTol);
}

// Overlapping streams count once; work outside the window is clipped; other devices ignored.
// Busy: [0, 5) (clipped from [-5, 5)), [10, 70) (union of [10, 50) and [30, 70)) = 65 us.
// Gaps [5, 10) and [70, 100): 35 us idle.
TEST(AnalyzeIdle, BusyIsTheClippedUnionOfOneDevice) {
  GpuRecords gpu;
  gpu.kernels = {kernel(-5, 5), kernel(10, 50, 7), kernel(30, 70, 8),
                 kernel(70, 100, 7, /*device=*/1), kernel(150, 160)};
  const StepIdle s = analyze(gpu);
  EXPECT_NEAR(s.busy_ms, 0.065, kTol);
  EXPECT_NEAR(s.idle_ms, 0.035, kTol);
  EXPECT_EQ(s.gaps.size(), 2u);
  expect_consistent(s);
}

TEST(AnalyzeIdle, EmptyWindowIsAllIdle) {
  const StepIdle s = analyze(GpuRecords{});
  EXPECT_NEAR(s.busy_ms, 0.0, kTol);
  EXPECT_NEAR(s.host_bound_ms, 0.100, kTol);
  EXPECT_EQ(idle_cause_name(IdleCause::kSync), "sync_bound");
  EXPECT_EQ(idle_cause_name(IdleCause::kData), "data_bound");
  EXPECT_EQ(idle_cause_name(IdleCause::kHost), "host_bound");
}

}  // namespace
}  // namespace llmprof::gpu
