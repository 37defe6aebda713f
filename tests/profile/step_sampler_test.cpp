// Shape and view sampling on hand-built op sequences (one thread's buffer, filled as the tracer's
// callbacks would): which steps read, what the others are mapped to, and when a read confirms or
// drops what was mapped. The same sampling on real LibTorch ops: tracer_test.cpp.
#include "step_sampler.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace llmprof::profile::detail {
namespace {

constexpr uint32_t kMm = 1, kSelect = 2, kAdd = 3;

// One thread's buffer and a sampler over it, stepped as Tracer::begin_step/end_step do.
struct SampledThread {
  Buffers buffers;
  StepSampler sampler;
  bool hid_views = false;

  SampledThread(int shape_interval, size_t active_steps)
      : sampler([&] {
          TracerOptions o;
          o.level = Level::kOps;
          o.shape_interval = shape_interval;
          o.active_steps = active_steps;
          return o;
        }()) {
    buffers.push_back(std::make_unique<ThreadBuffer>());
    reserve_buffer(tb(), 1000, /*ops=*/true, /*count_views=*/true);
    sampler.start_cycle();
  }
  ThreadBuffer& tb() { return *buffers[0]; }

  // Begins a kept step; returns whether it reads shapes.
  bool begin() {
    tb().step_first = tb().ops.size();
    tb().step_first_shape = tb().shapes.size();
    tb().view_log.clear();
    const bool reads = sampler.begin_step(true);
    hid_views = sampler.may_hide_views(buffers, true);
    return reads;
  }
  // An op at top level: with the shape [k] when the step reads shapes, else none.
  int32_t op(uint32_t name, int64_t k) {
    OpEvent e;
    e.name_id = name;
    if (sampler.step_reads()) {
      ShapeRecord& s = tb().shapes.emplace_back();
      s.ndim[0] = 1;
      s.dims[0][0] = k;
      e.shape_id = static_cast<int32_t>(tb().shapes.size() - 1);
    }
    tb().ops.push_back(e);
    tb().parents.push_back(-1);
    return static_cast<int32_t>(tb().ops.size() - 1);
  }
  // n view calls inside event `parent`, as a read step logs them.
  void views(int32_t parent, int n) {
    for (int i = 0; i < n; ++i) tb().view_log.push_back({kSelect, parent});
  }
  void end() { sampler.end_step(buffers, hid_views); }
};

TEST(StepSampler, StepsBetweenReadsTakeTheShapesOfTheLastReadOnceTheNextConfirmsThem) {
  SampledThread t(/*shape_interval=*/8, /*active_steps=*/4);
  std::vector<bool> reads;
  for (int step = 0; step < 4; ++step) {
    reads.push_back(t.begin());
    t.op(kMm, 5);
    t.end();
  }
  // The cycle's first step reads, and its last (step 3: before the gap of 8).
  EXPECT_EQ(reads, (std::vector<bool>{true, false, false, true}));
  const ShapeSampling& s = t.sampler.shape_sampling();
  EXPECT_EQ(s.read_steps, 2);
  EXPECT_EQ(s.mapped_steps, 2);
  EXPECT_EQ(s.unmapped_steps, 0);
  EXPECT_FALSE(s.every_step);
  // Steps 1 and 2 point at step 0's shape record; step 3 has its own.
  EXPECT_EQ(t.tb().ops[1].shape_id, 0);
  EXPECT_EQ(t.tb().ops[2].shape_id, 0);
  EXPECT_EQ(t.tb().ops[3].shape_id, 1);
}

TEST(StepSampler, TheGapToTheNextReadDoublesWhileTheShapesStayTheSame) {
  SampledThread t(/*shape_interval=*/2, /*active_steps=*/100);
  std::vector<int> read_steps;
  for (int step = 0; step < 16; ++step) {
    if (t.begin()) read_steps.push_back(step);
    t.op(kMm, 5);
    t.end();
  }
  // Step 0, then gaps of 2, 4 and 8.
  EXPECT_EQ(read_steps, (std::vector<int>{0, 2, 6, 14}));
  // 1, 3-5 and 7-13, each confirmed by the next read; step 15 waits for one.
  EXPECT_EQ(t.sampler.shape_sampling().mapped_steps, 11);
}

TEST(StepSampler, ShapesThatChangeBeforeTheNextReadAreDroppedAndEveryLaterStepReads) {
  SampledThread t(/*shape_interval=*/4, /*active_steps=*/8);
  for (int step = 0; step < 6; ++step) {
    t.begin();
    t.op(kMm, step < 2 ? 5 : 6);  // read at 0 and 4: the k of steps 1-3 is unknown
    t.end();
  }
  const ShapeSampling& s = t.sampler.shape_sampling();
  EXPECT_EQ(s.read_steps, 3);      // 0, 4, then 5 (every step after the difference)
  EXPECT_EQ(s.mapped_steps, 0);
  EXPECT_EQ(s.unmapped_steps, 3);  // 1-3 lose step 0's shapes
  EXPECT_TRUE(s.every_step);
  for (int step = 1; step <= 3; ++step) EXPECT_EQ(t.tb().ops[step].shape_id, -1) << step;
}

TEST(StepSampler, ADifferentOpSequenceLeavesThatStepWithoutShapes) {
  SampledThread t(/*shape_interval=*/8, /*active_steps=*/8);
  std::vector<bool> reads;
  for (int step = 0; step < 4; ++step) {
    reads.push_back(t.begin());
    t.op(kMm, 5);
    if (step == 1) t.op(kAdd, 5);
    t.end();
  }
  EXPECT_EQ(reads, (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(t.sampler.shape_sampling().unmapped_steps, 1);
  EXPECT_TRUE(t.sampler.shape_sampling().every_step);
  EXPECT_EQ(t.tb().ops[1].shape_id, -1);
}

TEST(StepSampler, HiddenViewsAreCountedFromTheReadStepWhenTheNextReadFindsTheSame) {
  SampledThread t(/*shape_interval=*/2, /*active_steps=*/3);  // reads 0 and 2
  for (int step = 0; step < 3; ++step) {
    const bool reads = t.begin();
    const int32_t mm = t.op(kMm, 5);
    if (reads) t.views(mm, 20);  // 20 >= kMinViewsToHide per call: hidden in step 1
    EXPECT_EQ(t.hid_views, step == 1) << step;
    t.end();
  }
  const ViewSampling& v = t.sampler.view_sampling();
  EXPECT_EQ(v.mapped_steps, 1);
  EXPECT_EQ(v.counted_views, 20);
  EXPECT_EQ(v.lost_steps, 0);
  EXPECT_EQ(t.tb().untimed[kSelect], 20);  // step 1's, as if observed
  EXPECT_EQ(t.tb().views_inside[kMm], 20);
}

TEST(StepSampler, HiddenViewsThatChangeBeforeTheNextReadAreLostAndSaidSo) {
  SampledThread t(/*shape_interval=*/2, /*active_steps=*/3);
  for (int step = 0; step < 3; ++step) {
    const bool reads = t.begin();
    const int32_t mm = t.op(kMm, 5);
    if (reads) t.views(mm, step == 0 ? 20 : 24);
    t.end();
  }
  const ViewSampling& v = t.sampler.view_sampling();
  EXPECT_EQ(v.mapped_steps, 0);
  EXPECT_EQ(v.counted_views, 0);
  EXPECT_EQ(v.lost_steps, 1);
  EXPECT_TRUE(t.sampler.shape_sampling().every_step);
  EXPECT_EQ(t.tb().untimed[kSelect], 0);
}

TEST(StepSampler, OpsWithFewViewsPerCallKeepThemObserved) {
  SampledThread t(/*shape_interval=*/2, /*active_steps=*/3);
  t.begin();
  t.views(t.op(kMm, 5), static_cast<int>(kMinViewsToHide) - 1);
  t.end();
  t.begin();
  EXPECT_FALSE(t.hid_views);
  EXPECT_EQ(StepSampler::hidden_views_per_step(t.buffers), 0);
}

TEST(StepSampler, StepsMappedWhenTheWindowEndsStayUnconfirmed) {
  SampledThread t(/*shape_interval=*/8, /*active_steps=*/10);
  for (int step = 0; step < 3; ++step) {
    const bool reads = t.begin();
    const int32_t mm = t.op(kMm, 5);
    if (reads) t.views(mm, 20);
    t.end();
  }
  t.sampler.stop(t.buffers);
  EXPECT_EQ(t.sampler.shape_sampling().unconfirmed_steps, 2);
  EXPECT_EQ(t.sampler.shape_sampling().mapped_steps, 0);
  EXPECT_EQ(t.sampler.view_sampling().unconfirmed_steps, 2);
  EXPECT_EQ(t.sampler.view_sampling().counted_views, 40);
  EXPECT_EQ(t.tb().untimed[kSelect], 40);
}

}  // namespace
}  // namespace llmprof::profile::detail
