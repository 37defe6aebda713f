// The CPU's DeviceContext and what device's torch half answers there (device/context.h,
// memory.h, random.h, peak.h): nothing moves, no allocator books, no events, the CPU generator.
#include "llmprof/device/context.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "llmprof/config/config.h"
#include "llmprof/device/memory.h"
#include "llmprof/device/peak.h"
#include "llmprof/device/random.h"
#include "llmprof/gpu/activity_source.h"
#include "llmprof/gpu/event_pool.h"

namespace llmprof::device {
namespace {

TEST(CpuContext, MovesNothingAndKeepsNoBooks) {
  const config::Config cfg;  // device: cpu
  const std::unique_ptr<DeviceContext> ctx = DeviceContext::make(cfg);
  EXPECT_FALSE(ctx->is_cuda());
  EXPECT_EQ(ctx->describe(), "cpu");
  const torch::Tensor t = torch::arange(6);
  EXPECT_EQ(ctx->to_device(t).data_ptr(), t.data_ptr());  // the loader's own buffer
  EXPECT_EQ(ctx->copy_to_device(t).data_ptr(), t.data_ptr());
  EXPECT_FALSE(ctx->to_device(torch::Tensor()).defined());
  EXPECT_EQ(ctx->slot_memory(), nullptr);
  EXPECT_FALSE(ctx->memory());
  EXPECT_EQ(ctx->event_api(), nullptr);
  EXPECT_EQ(ctx->activity_source(), nullptr);
  ctx->reset_peak_memory();  // nothing to reset
  ctx->synchronize();        // nothing queued
}

TEST(CpuContext, AutocastIsBf16OnTheCpuAndOffAtFp32) {
  const Autocast bf16(config::Device{}, config::Precision::kBf16);
  EXPECT_EQ(bf16.device_type, torch::kCPU);
  EXPECT_EQ(bf16.dtype, torch::kBFloat16);
  EXPECT_TRUE(bf16.on);
  EXPECT_FALSE(Autocast(config::Device{}, config::Precision::kFp32).on);
  const Autocast fp16(config::Device{config::DeviceKind::kCuda, 1}, config::Precision::kFp16);
  EXPECT_EQ(fp16.device_type, torch::kCUDA);
  EXPECT_EQ(fp16.dtype, torch::kHalf);
}

TEST(TorchDevice, IsTheCpuOrTheCudaOrdinal) {
  EXPECT_EQ(torch_device(config::Device{}), torch::Device(torch::kCPU));
  EXPECT_EQ(torch_device(config::Device{config::DeviceKind::kCuda, 3}),
            torch::Device(torch::kCUDA, 3));
}

TEST(AllocatorMemory, TheCpuHasNoCachingAllocator) {
  const config::Device cpu;
  EXPECT_FALSE(allocator_memory(cpu));
  reset_allocator_peak(cpu);         // nothing to reset
  set_allocator_fraction(cpu, 0.5);  // nothing to cap
  EXPECT_FALSE(allocator_memory(cpu));
}

TEST(DefaultGenerators, TheCpuHasOneUnderItsSavedName) {
  const std::vector<NamedGenerator> g = default_generators(torch::Device(torch::kCPU));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].key, "cpu");
  EXPECT_EQ(g[0].label, "CPU");
  EXPECT_TRUE(g[0].generator.device().is_cpu());
}

TEST(MatmulPeak, TimesASmallMatmulAndSaysHow) {
  const PeakFlops p = measure_matmul_peak(config::Precision::kFp32, 64, 2);
  EXPECT_GT(p.flops_per_s, 0);
  EXPECT_EQ(p.source, "measured");
  EXPECT_NE(p.method.find("best of 2 fp32 64x64 matmuls"), std::string::npos) << p.method;
}

}  // namespace
}  // namespace llmprof::device
