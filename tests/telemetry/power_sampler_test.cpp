// PowerSampler: a clean start/stop, frames at the configured rate stamped with now_ns(), its own
// CPU time measured, and a full ring that warns once and stops recording.
#include "llmprof/telemetry/power_sampler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "llmprof/base/clock.h"
#include "telemetry/scripted_sources.h"

namespace llmprof::telemetry {
namespace {

using test_sources::CaptureLog;
using test_sources::ConstantPower;
using test_sources::LinearCounter;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

TEST(PowerSampler, StartsStopsCleanlyAndMeasuresItsOwnCpuTime) {
  ConstantPower gpu("fake", "gpu0", 100.0);
  LinearCounter cpu("fake", "package-0", 50.0);
  PowerSampler sampler({&gpu, &cpu}, 100, 10000);
  EXPECT_EQ(sampler.channel_offset(0), 0u);
  EXPECT_EQ(sampler.channel_offset(1), 1u);
  const int64_t before_ns = now_ns();
  sampler.start();
  EXPECT_TRUE(sampler.running());
  EXPECT_GE(sampler.ring().size(), 1u);  // the synchronous first frame
  sleep_ms(200);
  sampler.stop();
  sampler.stop();  // idempotent
  const int64_t after_ns = now_ns();
  EXPECT_FALSE(sampler.running());

  const SampleRing& ring = sampler.ring();
  // 100 Hz for 200 ms: ~20 ticks plus first and final frames; loose bounds for a loaded machine.
  EXPECT_GE(ring.size(), 5u);
  EXPECT_LE(ring.size(), 25u);
  EXPECT_GE(ring.t_ns(0), before_ns);
  EXPECT_LE(ring.t_ns(ring.size() - 1), after_ns);
  for (size_t k = 1; k < ring.size(); ++k) {
    EXPECT_GT(ring.t_ns(k), ring.t_ns(k - 1)) << "frame " << k;
    EXPECT_DOUBLE_EQ(ring.at(k, 0).power_w, 100.0);
    EXPECT_GT(ring.at(k, 1).energy_j, ring.at(k - 1, 1).energy_j);
  }
  EXPECT_GT(sampler.cpu_ns(), 0);
  EXPECT_LT(sampler.cpu_ns(), sampler.wall_ns());  // far below one core
  EXPECT_GE(sampler.wall_ns(), 200000000);
  EXPECT_FALSE(sampler.ring_full());
}

TEST(PowerSampler, FullRingWarnsOnceAndStopsRecording) {
  CaptureLog log;
  ConstantPower gpu("fake", "gpu0", 100.0);
  PowerSampler sampler({&gpu}, 1000, 5);
  sampler.start();
  sleep_ms(60);  // ~60 ticks at 1 kHz into a 5-frame ring
  EXPECT_TRUE(sampler.ring_full());
  sampler.stop();  // the final frame has no room either
  EXPECT_EQ(sampler.ring().size(), 5u);
  EXPECT_TRUE(sampler.ring_full());
  const std::string text = log.text();
  EXPECT_NE(text.find("energy: sample buffer full (5 frames"), std::string::npos) << text;
  EXPECT_EQ(text.find("buffer full"), text.rfind("buffer full")) << "warned more than once";
}

TEST(PowerSampler, DestructorStopsARunningSampler) {
  ConstantPower gpu("fake", "gpu0", 1.0);
  {
    PowerSampler sampler({&gpu}, 1000, 1000);
    sampler.start();
    sleep_ms(5);
  }  // joins here; a leaked thread would crash the test binary
  SUCCEED();
}

TEST(PowerSampler, StopWithoutStartDoesNothing) {
  ConstantPower gpu("fake", "gpu0", 1.0);
  PowerSampler sampler({&gpu}, 10, 100);
  sampler.stop();
  EXPECT_EQ(sampler.ring().size(), 0u);
  EXPECT_EQ(sampler.cpu_ns(), 0);
}

}  // namespace
}  // namespace llmprof::telemetry
