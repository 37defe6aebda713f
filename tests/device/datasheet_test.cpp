// The datasheet peaks MFU is computed against on CUDA devices (device/peak.h datasheet_peak).
#include <gtest/gtest.h>

#include "llmprof/device/peak.h"

namespace llmprof::device {
namespace {

TEST(DatasheetPeak, KnowsTheDevicesByTheirCudaNames) {
  const auto h100 = datasheet_peak("NVIDIA H100 80GB HBM3", config::Precision::kBf16);
  ASSERT_TRUE(h100);
  EXPECT_DOUBLE_EQ(h100->flops_per_s, 989.4e12);
  EXPECT_EQ(h100->source, "datasheet");
  EXPECT_NE(h100->method.find("NVIDIA H100 SXM5 dense bf16/fp16 tensor-core peak"),
            std::string::npos)
      << h100->method;
  EXPECT_DOUBLE_EQ(datasheet_peak("NVIDIA H100 80GB HBM3", config::Precision::kFp16)->flops_per_s,
                   989.4e12);
  EXPECT_DOUBLE_EQ(datasheet_peak("NVIDIA H100 80GB HBM3", config::Precision::kFp32)->flops_per_s,
                   66.9e12);
  // The PCIe part is slower and must not match the SXM entry.
  EXPECT_DOUBLE_EQ(datasheet_peak("NVIDIA H100 PCIe", config::Precision::kBf16)->flops_per_s,
                   756.0e12);
  EXPECT_DOUBLE_EQ(datasheet_peak("NVIDIA H200", config::Precision::kBf16)->flops_per_s, 989.4e12);
  EXPECT_FALSE(datasheet_peak("NVIDIA GeForce RTX 4090", config::Precision::kBf16))
      << "an unknown device is measured instead";
  EXPECT_FALSE(datasheet_peak("", config::Precision::kBf16));
}

}  // namespace
}  // namespace llmprof::device
