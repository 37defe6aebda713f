// The device as a type: `device` (cpu | cuda | cuda:N) and `device_index` parsed once into
// config::Device {kind, index}, printed back unchanged, and bad values refused naming the key.
#include <gtest/gtest.h>

#include <string>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "support/config_error.h"
#include "support/test_support.h"

namespace llmprof::config {
namespace {

using test::config_error_of;

TEST(DeviceKey, DefaultsToTheCpuAndPrintsAsBefore) {
  const Config c;
  EXPECT_EQ(c.device.kind, DeviceKind::kCpu);
  EXPECT_EQ(c.device.index, 0);
  EXPECT_FALSE(c.device.is_cuda());
  const std::string yaml = to_yaml(c);
  EXPECT_NE(yaml.find("\ndevice: cpu"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\ndevice_index: 0"), std::string::npos) << yaml;
}

TEST(DeviceKey, ParsesCpuCudaAndCudaWithAnOrdinal) {
  Config c;
  apply_override(c, "device=cuda");
  EXPECT_EQ(c.device, (Device{DeviceKind::kCuda, 0}));
  EXPECT_TRUE(c.device.is_cuda());
  apply_override(c, "device=cuda:1");
  EXPECT_EQ(c.device, (Device{DeviceKind::kCuda, 1}));
  EXPECT_EQ(get_value(c, "device"), "cuda");
  EXPECT_EQ(get_value(c, "device_index"), "1");
  apply_override(c, "device=cpu");
  EXPECT_EQ(c.device.kind, DeviceKind::kCpu);
  EXPECT_FALSE(c.device.is_cuda());
  apply_override(c, "device_index=2");
  EXPECT_EQ(c.device.index, 2);
}

TEST(DeviceKey, AConfigFileSpellsCudaNTheSameWay) {
  test::ScratchDir dir("device");
  test::write_file(dir.file("c.yaml"), "threads: 1\ndevice: cuda:1\n");
  const Config c = load_config(dir.file("c.yaml"));
  EXPECT_EQ(c.device, (Device{DeviceKind::kCuda, 1}));
  const std::string yaml = to_yaml(c);
  EXPECT_NE(yaml.find("\ndevice: cuda"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\ndevice_index: 1"), std::string::npos) << yaml;
}

TEST(DeviceKey, ABadValueIsAConfigErrorNamingTheKeyAndTheValue) {
  for (const std::string bad : {"gpu", "CUDA", "cpu:0", "tpu"}) {
    Config c;
    const ConfigError e = config_error_of([&] { apply_override(c, "device=" + bad); });
    const std::string what = e.what();
    EXPECT_EQ(e.key(), "device") << what;
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(what.find("'" + bad + "' is not one of cpu|cuda"), std::string::npos) << what;
    EXPECT_EQ(c.device, Device{}) << "a rejected value leaves the config as it was";
  }
  for (const std::string bad : {"cuda:x", "cuda:-1", "cuda:1024", "cuda:"}) {
    Config c;
    const ConfigError e = config_error_of([&] { apply_override(c, "device=" + bad); });
    EXPECT_EQ(e.key(), "device") << e.what();
    EXPECT_NE(
        std::string(e.what()).find(bad + ": the device ordinal after 'cuda:' must be 0..1023"),
        std::string::npos)
        << e.what();
  }
  Config c;
  const ConfigError index = config_error_of([&] { apply_override(c, "device_index=1024"); });
  EXPECT_EQ(index.key(), "device_index") << index.what();
}

TEST(DeviceKey, ABadValueInAFileNamesTheFileAndLine) {
  test::ScratchDir dir("device");
  test::write_file(dir.file("c.yaml"), "threads: 1\ndevice: gpu\n");
  const ConfigError e = config_error_of([&] { load_config(dir.file("c.yaml")); });
  EXPECT_EQ(e.key(), "device") << e.what();
  EXPECT_EQ(e.file(), dir.file("c.yaml")) << e.what();
  EXPECT_EQ(e.line(), 2) << e.what();
}

}  // namespace
}  // namespace llmprof::config
