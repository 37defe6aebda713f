// NvmlSource against the fake libnvidia-ml.so builds (tests/telemetry/fake_nvml): energy counter
// preferred, power otherwise; a missing library, symbol, init or GPU turns it off with a reason.
#include "llmprof/telemetry/nvml.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace llmprof::telemetry {
namespace {

// Opens a fake NVML build for its control functions; NvmlSource dlopens the same path and so
// shares its state. Resets the fake to its defaults.
class FakeNvml {
 public:
  explicit FakeNvml(const char* path) : handle_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) ADD_FAILURE() << "dlopen " << path << ": " << dlerror();
    call<void (*)()>("fake_nvml_reset")();
  }
  ~FakeNvml() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  template <typename F>
  F call(const char* symbol) {
    void* f = handle_ != nullptr ? dlsym(handle_, symbol) : nullptr;
    if (f == nullptr) ADD_FAILURE() << "fake NVML lacks " << symbol;
    return reinterpret_cast<F>(f);
  }

 private:
  void* handle_;
};

TEST(NvmlSource, MissingLibraryIsUnavailableWithTheLoaderError) {
  NvmlSource nvml("/nonexistent/libnvidia-ml.so.1");
  Availability a = nvml.available();
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("dlopen(/nonexistent/libnvidia-ml.so.1) failed"), std::string::npos)
      << a.reason;
  EXPECT_NE(a.reason.find("No such file"), std::string::npos) << a.reason;
}

TEST(NvmlSource, PrefersTheEnergyCounterAndFallsBackToPowerPerGpu) {
  FakeNvml fake(LLMPROF_FAKE_NVML_FULL);
  NvmlSource nvml(LLMPROF_FAKE_NVML_FULL);
  Availability a = nvml.available();
  ASSERT_TRUE(a.available) << a.reason;
  const auto& ch = nvml.channels();
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[0].source, "nvml");
  EXPECT_EQ(ch[0].domain, "gpu0");
  EXPECT_EQ(ch[0].kind, ChannelKind::kCounter);  // Volta+: total energy counter
  EXPECT_NE(ch[0].label.find("Fake GPU 0"), std::string::npos) << ch[0].label;
  EXPECT_EQ(ch[1].domain, "gpu1");
  EXPECT_EQ(ch[1].kind, ChannelKind::kPower);  // NOT_SUPPORTED: integrate power
  EXPECT_TRUE(ch[0].in_total && ch[1].in_total);

  nvml.start(0);  // baseline: 1,000,000 mJ on GPU 0
  fake.call<void (*)(unsigned, unsigned long long)>("fake_nvml_set_energy_mj")(0, 1250000);
  fake.call<void (*)(unsigned, unsigned)>("fake_nvml_set_power_mw")(1, 80500);
  Reading r[2];
  nvml.sample(1, r);
  EXPECT_DOUBLE_EQ(r[0].energy_j, 250.0);  // (1,250,000 - 1,000,000) mJ
  EXPECT_DOUBLE_EQ(r[0].power_w, 150.0);   // 150,000 mW
  EXPECT_DOUBLE_EQ(r[0].utilisation, 0.5);
  EXPECT_DOUBLE_EQ(r[0].temperature_c, 60.0);
  EXPECT_DOUBLE_EQ(r[0].sm_clock_mhz, 1410.0);
  EXPECT_DOUBLE_EQ(r[0].memory_used_bytes, 1073741824.0);
  EXPECT_TRUE(std::isnan(r[1].energy_j));
  EXPECT_DOUBLE_EQ(r[1].power_w, 80.5);

  // The costly counter is read at most every 90 ms; power on every sample.
  fake.call<void (*)(unsigned, unsigned long long)>("fake_nvml_set_energy_mj")(0, 1300000);
  nvml.sample(1 + 50000000, r);  // 50 ms later
  EXPECT_TRUE(std::isnan(r[0].energy_j));
  EXPECT_DOUBLE_EQ(r[0].power_w, 150.0);
  nvml.sample(1 + 90000000, r);  // 90 ms after the last read
  EXPECT_DOUBLE_EQ(r[0].energy_j, 300.0);
}

TEST(NvmlSource, MissingEnergySymbolFallsBackToPowerIntegration) {
  FakeNvml fake(LLMPROF_FAKE_NVML_NO_ENERGY);
  NvmlSource nvml(LLMPROF_FAKE_NVML_NO_ENERGY);
  Availability a = nvml.available();
  ASSERT_TRUE(a.available) << a.reason;
  ASSERT_EQ(nvml.channels().size(), 2u);
  EXPECT_EQ(nvml.channels()[0].kind, ChannelKind::kPower);
  EXPECT_EQ(nvml.channels()[1].kind, ChannelKind::kPower);
  nvml.start(0);
  Reading r[2];
  nvml.sample(1, r);
  EXPECT_TRUE(std::isnan(r[0].energy_j));
  EXPECT_DOUBLE_EQ(r[0].power_w, 150.0);
  EXPECT_DOUBLE_EQ(r[1].power_w, 75.0);
}

TEST(NvmlSource, MissingRequiredSymbolIsUnavailableWithItsName) {
  FakeNvml fake(LLMPROF_FAKE_NVML_NO_COUNT);
  NvmlSource nvml(LLMPROF_FAKE_NVML_NO_COUNT);
  Availability a = nvml.available();
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("symbol nvmlDeviceGetCount_v2 not found"), std::string::npos) << a.reason;
  EXPECT_TRUE(nvml.channels().empty());
}

TEST(NvmlSource, NoGpuIsUnavailableAndShutsNvmlDown) {
  FakeNvml fake(LLMPROF_FAKE_NVML_FULL);
  fake.call<void (*)(unsigned)>("fake_nvml_set_device_count")(0);
  {
    NvmlSource nvml(LLMPROF_FAKE_NVML_FULL);
    Availability a = nvml.available();
    EXPECT_FALSE(a.available);
    EXPECT_EQ(a.reason, "nvmlDeviceGetCount_v2: no GPU");
  }
  EXPECT_EQ(fake.call<int (*)()>("fake_nvml_shutdown_calls")(), 1);
}

TEST(NvmlSource, InitFailureIsUnavailableWithNvmlErrorString) {
  FakeNvml fake(LLMPROF_FAKE_NVML_FULL);
  fake.call<void (*)(int)>("fake_nvml_set_init_return")(9);  // NVML_ERROR_DRIVER_NOT_LOADED
  NvmlSource nvml(LLMPROF_FAKE_NVML_FULL);
  Availability a = nvml.available();
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason, "nvmlInit_v2: Driver Not Loaded (code 9)");
  EXPECT_EQ(fake.call<int (*)()>("fake_nvml_shutdown_calls")(), 0);  // never initialised
}

TEST(NvmlSource, ShutsDownOnceWhenDestroyed) {
  FakeNvml fake(LLMPROF_FAKE_NVML_FULL);
  {
    NvmlSource nvml(LLMPROF_FAKE_NVML_FULL);
    ASSERT_TRUE(nvml.available().available);
    nvml.start(0);
    nvml.stop();
  }
  EXPECT_EQ(fake.call<int (*)()>("fake_nvml_shutdown_calls")(), 1);
}

}  // namespace
}  // namespace llmprof::telemetry
