// bench's call timer over the session's device span (gpu::StepEventSpan): on a device each call is
// the elapsed time between its two events, the host waiting for the second; on the CPU the steady
// clock around the call.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bench_measure.h"
#include "support/fake_event_api.h"

namespace llmprof::eval {
namespace {

using test::FakeEventApi;

TEST(CallTimer, OnADeviceTimesEachCallBetweenItsTwoEventsWaitingForTheSecond) {
  // Event stamps (ms): call 1 from 1.0 to 3.5, call 2 from 10.0 to 10.25.
  FakeEventApi api({1.0f, 3.5f, 10.0f, 10.25f});
  {
    CallTimer timer(&api);
    EXPECT_EQ(api.created, 2);  // once, before any call
    timer.start();
    EXPECT_EQ(api.syncs, 0);  // the start is only enqueued
    EXPECT_DOUBLE_EQ(timer.stop_ms(), 2.5);
    EXPECT_EQ(api.syncs, 1);
    EXPECT_EQ(api.synced, FakeEventApi::event(2));  // the end event
    timer.start();
    EXPECT_DOUBLE_EQ(timer.stop_ms(), 0.25);
    EXPECT_EQ(api.created, 2);  // the same two events again
    EXPECT_EQ(api.records, 4);
  }
  EXPECT_EQ(api.destroyed, 2);
}

TEST(CallTimer, OnTheCpuReadsTheSteadyClockAroundTheCall) {
  CallTimer timer(nullptr);
  timer.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double ms = timer.stop_ms();
  EXPECT_GE(ms, 5.0);
  EXPECT_LT(ms, 5000.0);  // a loaded host, never a unit off (ns or s)
}

}  // namespace
}  // namespace llmprof::eval
