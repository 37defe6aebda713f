#include "llmprof/gpu/cuda_availability.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "llmprof/gpu/cupti_source.h"
#include "llmprof/gpu/event_pool.h"
#include "llmprof/gpu/gpu_error.h"

namespace llmprof::gpu {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(CudaAvailability, CpuOnlyLibTorchBuildSaysHowToRebuild) {
  if (built_with_cuda_torch()) GTEST_SKIP() << "this build has CUDA LibTorch";
  const CudaAvailability a = cuda_availability();
  EXPECT_FALSE(a.available);
  EXPECT_TRUE(contains(a.reason, "this llmprof was built against CPU-only LibTorch")) << a.reason;
  EXPECT_TRUE(contains(a.reason, "rebuild with scripts/build_gpu.sh on a CUDA machine"))
      << a.reason;
}

TEST(CudaAvailability, DecisionNamesTheCudaError) {
  const CudaAvailability e = decide_cuda_availability(
      true, "2.11.0", true, 100, "cudaErrorNoDevice", "no CUDA-capable device is detected", 0);
  EXPECT_FALSE(e.available);
  EXPECT_EQ(e.reason,
            "CUDA runtime: cudaGetDeviceCount failed: cudaErrorNoDevice (no CUDA-capable device is "
            "detected); check nvidia-smi, the driver and CUDA_VISIBLE_DEVICES");
  const CudaAvailability none = decide_cuda_availability(true, "", true, 0, "", "", 0);
  EXPECT_FALSE(none.available);
  EXPECT_TRUE(contains(none.reason, "no CUDA device is visible"));
  const CudaAvailability ok = decide_cuda_availability(true, "", true, 0, "", "", 2);
  EXPECT_TRUE(ok.available);
  EXPECT_TRUE(ok.reason.empty());
  EXPECT_EQ(ok.device_count, 2);
  const CudaAvailability cpu = decide_cuda_availability(false, "1.13.0", false, 0, "", "", 0);
  EXPECT_TRUE(contains(cpu.reason, "CPU-only LibTorch 1.13.0;")) << cpu.reason;
  const CudaAvailability no_toolkit = decide_cuda_availability(true, "", false, 0, "", "", 0);
  EXPECT_TRUE(contains(no_toolkit.reason, "without the CUDA toolkit")) << no_toolkit.reason;
}

TEST(CudaAvailability, WithoutTheCudaRuntimeEventsAndCuptiRefuseWithAReason) {
  if (built_with_cuda_runtime()) GTEST_SKIP() << "this build has the CUDA runtime";
  try {
    make_cuda_event_api();
    FAIL() << "no error";
  } catch (const GpuError& e) {
    EXPECT_TRUE(contains(e.what(), "built without the CUDA runtime")) << e.what();
  }
  EXPECT_FALSE(CuptiActivitySource::available().available);
  CuptiActivitySource source;
  EXPECT_THROW(source.start(), GpuError);
  GpuRecords out;
  EXPECT_EQ(source.collect(out), 0u);
}

// With the CUDA runtime built in but no device (a compile-check build on a CPU host), the probe
// reports the runtime's own error.
TEST(CudaAvailability, RuntimeProbeReportsTheCudaErrorWithoutADevice) {
  if (!built_with_cuda_runtime()) GTEST_SKIP() << "this build has no CUDA runtime";
  const CudaAvailability a = cuda_runtime_probe();
  if (a.available) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_TRUE(contains(a.reason, "CUDA runtime:")) << a.reason;
  std::printf("probe on this host: %s\n", a.reason.c_str());
  try {
    auto api = make_cuda_event_api();
    api->create();
    FAIL() << "an event was created without a device";
  } catch (const GpuError& e) {
    EXPECT_TRUE(contains(e.what(), "cudaEventCreateWithFlags failed: cudaError")) << e.what();
  }
}

// With CUPTI linked but no driver, start() names the failing CUPTI call and leaves the
// process-wide callbacks free, so a later source can try again.
TEST(CudaAvailability, CuptiStartWithoutADeviceNamesTheFailingCall) {
  if (!built_with_cupti()) GTEST_SKIP() << "this build has no CUPTI";
  if (cuda_runtime_probe().available) GTEST_SKIP() << "a CUDA device is present";
  for (int attempt = 0; attempt < 2; ++attempt) {
    CuptiActivitySource source;
    try {
      source.start();
      FAIL() << "CUPTI started without a driver";
    } catch (const GpuError& e) {
      EXPECT_TRUE(contains(e.what(), "failed: CUPTI_ERROR")) << e.what();
      EXPECT_FALSE(contains(e.what(), "another activity source")) << e.what();
    }
  }
}

}  // namespace
}  // namespace llmprof::gpu
