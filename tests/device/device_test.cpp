// The configured device decided in one place (device/device.h): its capabilities, ddp.backend
// resolved once, a rank's CUDA ordinal, the check against this build and host, the peaks' sizes.
#include "llmprof/device/device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/peak.h"
#include "llmprof/error.h"
#include "llmprof/gpu/cuda_availability.h"

namespace llmprof::device {
namespace {

config::Device cpu() { return {config::DeviceKind::kCpu, 0}; }
config::Device cuda(int64_t index) { return {config::DeviceKind::kCuda, index}; }

config::Config config_on(const std::string& device, const std::string& backend = "auto") {
  config::Config c;
  config::apply_override(c, "device=" + device);
  config::apply_override(c, "ddp.backend=" + backend);
  return c;
}

TEST(Capabilities, TheCpuQuantizesToInt8AndHasNoFp16CachingAllocatorOrEvents) {
  const Capabilities c = capabilities(cpu());
  EXPECT_TRUE(c.int8_dynamic_quant);
  EXPECT_FALSE(c.fp16);
  EXPECT_FALSE(c.caching_allocator);
  EXPECT_FALSE(c.timing_events);
  EXPECT_FALSE(c.fused_kernels);
}

TEST(Capabilities, ACudaDeviceHasFp16ItsCachingAllocatorEventsAndKernelsButNoInt8Engine) {
  const Capabilities c = capabilities(cuda(1));
  EXPECT_TRUE(c.fp16);
  EXPECT_TRUE(c.caching_allocator);
  EXPECT_TRUE(c.timing_events);
  EXPECT_TRUE(c.fused_kernels);
  EXPECT_FALSE(c.int8_dynamic_quant);
}

TEST(CudaAllocatorSettings, TheCpuHasNoneWhateverTheEnvironmentSays) {
  ::setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:64", 1);
  config::Config c = config_on("cpu");
  c.train.cuda_expandable_segments = true;
  EXPECT_EQ(cuda_allocator_settings(c), "");
  c = config_on("cuda");
  EXPECT_EQ(cuda_allocator_settings(c), "max_split_size_mb:64");
  c.train.cuda_expandable_segments = true;
  EXPECT_EQ(cuda_allocator_settings(c), "max_split_size_mb:64,expandable_segments:True");
  ::unsetenv("PYTORCH_CUDA_ALLOC_CONF");
}

TEST(ResolveBackend, AutoIsGlooOnTheCpuAndNcclOnCuda) {
  EXPECT_EQ(resolve_backend(config_on("cpu")), config::DdpBackend::kGloo);
  EXPECT_EQ(resolve_backend(config_on("cuda:1")), config::DdpBackend::kNccl);
}

TEST(ResolveBackend, AConfiguredBackendIsKeptWhateverTheDevice) {
  EXPECT_EQ(resolve_backend(config_on("cpu", "gloo")), config::DdpBackend::kGloo);
  EXPECT_EQ(resolve_backend(config_on("cuda", "gloo")), config::DdpBackend::kGloo);
  EXPECT_EQ(resolve_backend(config_on("cuda", "nccl")), config::DdpBackend::kNccl);
}

TEST(CudaOrdinal, IsMinusOneOnTheCpuElseTheLocalRankOrTheConfiguredIndex) {
  EXPECT_EQ(cuda_ordinal(cpu()), -1);
  EXPECT_EQ(cuda_ordinal(cpu(), 3), -1);
  EXPECT_EQ(cuda_ordinal(cuda(2)), 2);
  EXPECT_EQ(cuda_ordinal(cuda(2), 5), 5);
}

TEST(CheckDevice, TheCpuIsAlwaysThere) { EXPECT_NO_THROW(check_device(config_on("cpu"))); }

TEST(CheckDevice, CudaWhereThisBuildOrHostHasNoneIsAConfigErrorNamingDevice) {
  if (gpu::cuda_availability().available) GTEST_SKIP() << "this build and host have CUDA";
  try {
    check_device(config_on("cuda"));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("device: 'cuda' is not available"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.key(), "device");
  }
}

TEST(CheckDevice, AnOrdinalBeyondTheDevicesIsAConfigErrorNamingDeviceIndex) {
  const gpu::CudaAvailability a = gpu::cuda_availability();
  if (!a.available) GTEST_SKIP() << "no CUDA device here: " << a.reason;
  try {
    check_device(config_on("cuda:" + std::to_string(a.device_count)));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    EXPECT_EQ(e.key(), "device_index");
  }
}

TEST(PeakSizes, OneTableForARunAndLlmprofPeak) {
  const PeakSizes c = peak_sizes(cpu());
  EXPECT_EQ(c.matmul_n, 2048);
  EXPECT_EQ(c.matmul_reps, 5);
  EXPECT_EQ(c.run_bandwidth_reps, 3);
  EXPECT_EQ(c.peak_bandwidth_reps, 5);
  const PeakSizes g = peak_sizes(cuda(0));
  EXPECT_EQ(g.matmul_n, 8192);
  EXPECT_EQ(g.matmul_reps, 10);
  EXPECT_EQ(g.run_bandwidth_reps, 3);
  EXPECT_EQ(g.peak_bandwidth_reps, 10);
}

}  // namespace
}  // namespace llmprof::device
