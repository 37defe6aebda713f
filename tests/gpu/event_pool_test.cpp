#include "llmprof/gpu/event_pool.h"

#include <gtest/gtest.h>

#include "support/fake_event_api.h"

namespace llmprof::gpu {
namespace {

using profile::Phase;

using test::FakeEventApi;

TEST(PhaseEventPool, PreallocatesTwoEventsPerIntervalAndDestroysThem) {
  FakeEventApi api({});
  {
    PhaseEventPool pool(api, 3);
    EXPECT_EQ(api.created, 6);
    EXPECT_EQ(pool.capacity(), 3);
  }
  EXPECT_EQ(api.destroyed, 6);
}

// Script (ms): data 0 -> 2, forward 2.5 -> 10, backward 10 -> 25; the optimizer finds the pool
// full. Durations: data 2, forward 7.5, backward 15.
TEST(PhaseEventPool, ResolvesDurationsWithOneSyncAndCountsOverflow) {
  FakeEventApi api({0.0f, 2.0f, 2.5f, 10.0f, 10.0f, 25.0f});
  PhaseEventPool pool(api, 3);
  pool.begin_step();
  for (Phase p : {Phase::kData, Phase::kForward, Phase::kBackward}) {
    const int slot = pool.begin(p);
    EXPECT_GE(slot, 0);
    pool.end(slot);
  }
  const int full = pool.begin(Phase::kOptimizer);
  EXPECT_EQ(full, -1);
  pool.end(full);  // no-op
  EXPECT_EQ(api.created, 6) << "no event is created during the step";
  EXPECT_EQ(api.records, 6);
  EXPECT_EQ(api.syncs, 0) << "no host sync during the step";

  const GpuPhaseTimes t = pool.resolve();
  EXPECT_EQ(api.syncs, 1);
  // Slot k holds events 2k+1 (begin) and 2k+2 (end): the last recorded is backward's end, 6.
  EXPECT_EQ(api.synced, FakeEventApi::event(6)) << "the sync waits on the last recorded event";
  EXPECT_EQ(t.overflows, 1);
  EXPECT_EQ(pool.total_overflows(), 1);
  ASSERT_EQ(t.intervals.size(), 3u);
  EXPECT_FLOAT_EQ(*t.phase_ms[static_cast<int>(Phase::kData)], 2.0f);
  EXPECT_FLOAT_EQ(*t.phase_ms[static_cast<int>(Phase::kForward)], 7.5f);
  EXPECT_FLOAT_EQ(*t.phase_ms[static_cast<int>(Phase::kBackward)], 15.0f);
  EXPECT_FALSE(t.phase_ms[static_cast<int>(Phase::kOptimizer)].has_value()) << "null, not 0";
  EXPECT_FLOAT_EQ(t.intervals[1].start_ms, 2.5f);
  EXPECT_FLOAT_EQ(t.intervals[2].start_ms, 10.0f);
}

// A second step reuses the slots; repeated phases (grad accumulation) add up; an interval begun
// but never ended is reported, not timed.
TEST(PhaseEventPool, ReusesSlotsAcrossStepsAndSumsRepeatedPhases) {
  FakeEventApi api({});
  PhaseEventPool pool(api, 4);
  pool.begin_step();
  pool.end(pool.begin(Phase::kForward));
  api.script({0.0f, 1.0f, 1.0f, 4.0f, 4.0f});
  pool.begin_step();
  pool.end(pool.begin(Phase::kForward));
  pool.end(pool.begin(Phase::kForward));
  pool.begin(Phase::kBackward);  // never ended
  EXPECT_EQ(pool.used(), 3);
  const GpuPhaseTimes t = pool.resolve();
  EXPECT_FLOAT_EQ(*t.phase_ms[static_cast<int>(Phase::kForward)], 4.0f);  // 1 + 3
  EXPECT_EQ(t.unclosed, 1);
  EXPECT_EQ(t.overflows, 0);
  EXPECT_EQ(api.created, 8);
}

TEST(PhaseEventPool, NothingRecordedResolvesWithoutSync) {
  FakeEventApi api({});
  PhaseEventPool pool(api, 2);
  pool.begin_step();
  const GpuPhaseTimes t = pool.resolve();
  EXPECT_TRUE(t.intervals.empty());
  EXPECT_EQ(api.syncs, 0);
}

TEST(ScopedGpuPhase, RecordsBeginAndEndOrNothingWithoutAPool) {
  FakeEventApi api({0.0f, 5.0f});
  PhaseEventPool pool(api, 1);
  pool.begin_step();
  { ScopedGpuPhase phase(&pool, Phase::kEval); }
  { ScopedGpuPhase phase(nullptr, Phase::kEval); }
  EXPECT_EQ(api.records, 2);
  EXPECT_FLOAT_EQ(*pool.resolve().phase_ms[static_cast<int>(Phase::kEval)], 5.0f);
}

// The step's own span (every profile level): two events, one wait on the end, null until closed.
TEST(StepEventSpan, TimesTheWholeStepWithOneSyncOnItsEnd) {
  FakeEventApi api({3.0f, 45.5f, 50.0f});
  {
    StepEventSpan span(api);
    EXPECT_EQ(api.created, 2);
    EXPECT_FALSE(span.resolve().has_value());  // never begun: nothing to wait for
    EXPECT_EQ(api.syncs, 0);
    span.begin();
    span.end();
    const std::optional<double> ms = span.resolve();
    ASSERT_TRUE(ms.has_value());
    EXPECT_DOUBLE_EQ(*ms, 42.5);
    EXPECT_EQ(api.syncs, 1);
    EXPECT_EQ(api.synced, FakeEventApi::event(2));  // the end event
    span.begin();  // a step begun and not ended (it threw): not timed
    EXPECT_FALSE(span.resolve().has_value());
  }
  EXPECT_EQ(api.destroyed, 2);
}

}  // namespace
}  // namespace llmprof::gpu
