// CUPTI activity records filled by hand, converted without a GPU. Compiled where CMake found CUDA
// 13's CUPTI headers (LLMPROF_HAVE_CUPTI_HEADERS); elsewhere one test says it was skipped.
#include "cupti_convert.h"

#include <gtest/gtest.h>

#include "llmprof/gpu/cuda_availability.h"

#if defined(LLMPROF_HAVE_CUPTI_HEADERS)

#include <cstring>

namespace llmprof::gpu {
namespace {

template <typename T>
T zeroed() {
  T t;
  std::memset(&t, 0, sizeof t);
  return t;
}

template <typename T>
const CUpti_Activity& as_activity(const T& record) {
  return reinterpret_cast<const CUpti_Activity&>(record);
}

TEST(CuptiConvert, ConcurrentKernelRecord) {
  auto k = zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "_Z6kernelPfi";
  k.start = 1'000'000;
  k.end = 1'250'000;
  k.deviceId = 0;
  k.streamId = 7;
  k.correlationId = 42;
  k.gridX = 64;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 37;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 20000;
  k.sharedMemoryExecuted = 233472;
  GpuRecords out;
  ASSERT_TRUE(convert_activity(as_activity(k), out));
  ASSERT_EQ(out.kernels.size(), 1u);
  const KernelRecord& r = out.kernels[0];
  EXPECT_EQ(r.name, "kernel(float*, int)") << "demangled";
  EXPECT_EQ(r.start_ns, 1'000'000);
  EXPECT_EQ(r.duration_ns(), 250'000);
  EXPECT_EQ(r.stream, 7u);
  EXPECT_EQ(r.correlation_id, 42u);
  EXPECT_EQ(r.grid, (Dim3{64, 2, 1}));
  EXPECT_EQ(r.block, (Dim3{256, 1, 1}));
  EXPECT_EQ(r.registers_per_thread, 37);
  EXPECT_EQ(r.shared_mem_bytes(), 21024);
  EXPECT_EQ(r.smem_config_bytes, 233472);
}

// A forced flush hands back the records of work not finished yet with no timestamps: in an H100
// run's trace 245 kernels and memsets sat at 0 ns, 109 s before everything else. They are left
// out and counted, never placed at the clock's origin.
TEST(CuptiConvert, RecordsWithoutTimestampsAreLeftOutAndCounted) {
  auto k = zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "_Z6kernelPfi";
  k.correlationId = 7;  // start = end = 0
  auto m = zeroed<CUpti_ActivityMemset4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.start = 2'000;
  m.end = 1'000;  // ends before it starts
  auto ok = zeroed<CUpti_ActivityKernel10>();
  ok.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  ok.name = "_Z6kernelPfi";
  ok.start = 5'000;
  ok.end = 5'000;  // a zero-length kernel is complete
  GpuRecords out;
  EXPECT_FALSE(convert_activity(as_activity(k), out));
  EXPECT_FALSE(convert_activity(as_activity(m), out));
  EXPECT_TRUE(convert_activity(as_activity(ok), out));
  EXPECT_EQ(out.incomplete, 2);
  ASSERT_EQ(out.kernels.size(), 1u);
  EXPECT_EQ(out.kernels[0].start_ns, 5'000);
  EXPECT_TRUE(out.memsets.empty());
}

TEST(CuptiConvert, MemcpyMemsetAndSyncRecords) {
  auto m = zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  m.streamId = 3;
  m.correlationId = 5;
  auto s = zeroed<CUpti_ActivityMemset4>();
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.value = 0;
  s.bytes = 4096;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.start = 30;
  s.end = 31;
  s.correlationId = 6;
  auto y = zeroed<CUpti_ActivitySynchronization2>();
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  y.start = 40;
  y.end = 90;
  y.streamId = CUPTI_INVALID_STREAM_ID;
  y.correlationId = 8;
  GpuRecords out;
  ASSERT_TRUE(convert_activity(as_activity(m), out));
  ASSERT_TRUE(convert_activity(as_activity(s), out));
  ASSERT_TRUE(convert_activity(as_activity(y), out));
  ASSERT_EQ(out.memcpys.size(), 1u);
  EXPECT_EQ(out.memcpys[0].kind, CopyKind::kHtoD);
  EXPECT_EQ(out.memcpys[0].src_memory, MemoryKind::kPinned);
  EXPECT_EQ(out.memcpys[0].dst_memory, MemoryKind::kDevice);
  EXPECT_EQ(out.memcpys[0].bytes, 1 << 20);
  EXPECT_EQ(out.memcpys[0].stream, 3u);
  ASSERT_EQ(out.memsets.size(), 1u);
  EXPECT_EQ(out.memsets[0].bytes, 4096);
  EXPECT_EQ(out.memsets[0].memory, MemoryKind::kDevice);
  ASSERT_EQ(out.syncs.size(), 1u);
  EXPECT_EQ(out.syncs[0].type, SyncType::kContextSynchronize);
  EXPECT_EQ(out.syncs[0].stream, kNoStream);
  EXPECT_EQ(out.syncs[0].end_ns, 90);
}

std::string fake_callback_name(uint32_t cbid) { return "cudaSomething" + std::to_string(cbid); }

// cuBLASLt and cuDNN launch through the driver API: those launches correlate kernels as runtime
// launches do; other driver calls are not kept.
TEST(CuptiConvert, DriverLaunchesAreKeptAsLaunchesAndOtherDriverCallsDropped) {
  auto a = zeroed<CUpti_ActivityAPI>();
  a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
  a.start = 200;
  a.end = 204;
  a.threadId = 77;
  a.correlationId = 9;
  GpuRecords out;
  ASSERT_TRUE(convert_activity(as_activity(a), out));
  a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz;
  ASSERT_TRUE(convert_activity(as_activity(a), out));
  a.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2;
  EXPECT_FALSE(convert_activity(as_activity(a), out));
  ASSERT_EQ(out.runtime.size(), 2u);
  EXPECT_EQ(out.runtime[0].name, "cuLaunchKernelEx");
  EXPECT_EQ(out.runtime[0].api_class(), ApiClass::kLaunch);
  EXPECT_EQ(out.runtime[0].correlation_id, 9u);
  EXPECT_EQ(out.runtime[0].thread_id, 77u);
  EXPECT_EQ(out.runtime[1].name, "cuLaunchKernel");
}

TEST(CuptiConvert, RuntimeRecordsAreNamedAndClassified) {
  auto a = zeroed<CUpti_ActivityAPI>();
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  a.start = 100;
  a.end = 105;
  a.threadId = 4242;
  a.correlationId = 42;
  GpuRecords out;
  ASSERT_TRUE(convert_activity(as_activity(a), out, fake_callback_name));
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000;
  ASSERT_TRUE(convert_activity(as_activity(a), out, fake_callback_name));
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;  // not in the table: asks the resolver
  ASSERT_TRUE(convert_activity(as_activity(a), out, fake_callback_name));
  ASSERT_TRUE(convert_activity(as_activity(a), out));  // no resolver
  ASSERT_EQ(out.runtime.size(), 4u);
  EXPECT_EQ(out.runtime[0].name, "cudaLaunchKernel");
  EXPECT_EQ(out.runtime[0].api_class(), ApiClass::kLaunch);
  EXPECT_EQ(out.runtime[0].thread_id, 4242u);
  EXPECT_EQ(out.runtime[0].correlation_id, 42u);
  EXPECT_EQ(out.runtime[1].name, "cudaStreamSynchronize");
  EXPECT_EQ(out.runtime[1].api_class(), ApiClass::kSync);
  EXPECT_EQ(out.runtime[2].name,
            "cudaSomething" + std::to_string(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
  EXPECT_EQ(out.runtime[3].name,
            "cudaRuntimeCbid" + std::to_string(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
}

TEST(CuptiConvert, OtherKindsAreNotConverted) {
  auto a = zeroed<CUpti_ActivityAPI>();
  a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  GpuRecords out;
  EXPECT_FALSE(convert_activity(as_activity(a), out));
  EXPECT_EQ(out.size(), 0u);
}

}  // namespace
}  // namespace llmprof::gpu

#else

TEST(CuptiConvert, SkippedWithoutCuptiHeaders) {
  EXPECT_FALSE(llmprof::gpu::built_with_cupti_headers());
  GTEST_SKIP() << "CUPTI headers (CUDA 13) not found at configure time: conversion not built";
}

#endif
