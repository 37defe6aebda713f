// The tracer on real LibTorch ops: shape sampling (shapes read in some steps, mapped op by op onto
// the others, and dropped when a later read shows they changed).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>

#include "llmprof/profile/tracer.h"

namespace llmprof::profile {
namespace {

// Records `steps` kept steps of one mm each ([n, k] x [k, n]; k = k_of(step)), reading shapes
// every `interval` steps.
TraceData record_mm_steps(int steps, int interval, int64_t (*k_of)(int)) {
  TracerOptions o;
  o.level = Level::kOps;
  o.active_steps = static_cast<size_t>(steps);
  o.shape_interval = interval;
  o.max_events = 100000;
  Tracer tracer(o);
  tracer.start_window();
  for (int step = 0; step < steps; ++step) {
    tracer.begin_step(step, true);
    const int64_t k = k_of(step);
    (void)torch::mm(torch::ones({8, k}), torch::ones({k, 8}));
    tracer.end_step();
  }
  tracer.stop_window();
  return tracer.take_data();
}

// Per step: the k of its aten::mm as its shape says, or -1 without a shape.
std::map<int32_t, int64_t> mm_k_per_step(const TraceData& d) {
  std::map<int32_t, int64_t> k;
  for (const OpEvent& e : d.ops) {
    if (d.names[e.name_id] != "aten::mm") continue;
    k[e.step] = e.shape_id < 0 ? -1 : d.shapes[static_cast<size_t>(e.shape_id)].dims[0][1];
  }
  return k;
}

TEST(ShapeSampling, StepsBetweenReadsTakeTheShapesOfTheLastRead) {
  const TraceData d = record_mm_steps(10, 4, [](int) -> int64_t { return 16; });
  // Read: first, 4 steps later, last (0, 4, 9; the next gap, 8, ends past the window); mapped and
  // confirmed: the other seven.
  EXPECT_EQ(d.shape_sampling.read_steps, 3);
  EXPECT_EQ(d.shape_sampling.mapped_steps, 7);
  EXPECT_EQ(d.shape_sampling.unmapped_steps, 0);
  EXPECT_EQ(d.shape_sampling.unconfirmed_steps, 0);
  EXPECT_FALSE(d.shape_sampling.every_step);
  const auto k = mm_k_per_step(d);
  ASSERT_EQ(k.size(), 10u);
  for (const auto& [step, kk] : k) EXPECT_EQ(kk, 16) << "step " << step;
}

TEST(ShapeSampling, IntervalOneReadsEveryStep) {
  const TraceData d = record_mm_steps(5, 1, [](int) -> int64_t { return 16; });
  EXPECT_EQ(d.shape_sampling.read_steps, 5);
  EXPECT_EQ(d.shape_sampling.mapped_steps, 0);
}

// Each read that finds the shapes unchanged doubles the gap to the next: over a long window the
// boxing of every op's arguments is paid in a handful of steps.
TEST(ShapeSampling, TheGapDoublesWhileTheShapesStayTheSame) {
  const TraceData d = record_mm_steps(40, 4, [](int) -> int64_t { return 16; });
  // Read: 0, 4, 12, 28 (gaps 4, 8, 16; the next, 32, ends past the window), and the last, 39.
  EXPECT_EQ(d.shape_sampling.read_steps, 5);
  EXPECT_EQ(d.shape_sampling.mapped_steps, 35);
  EXPECT_EQ(d.shape_sampling.unconfirmed_steps, 0);
  const auto k = mm_k_per_step(d);
  ASSERT_EQ(k.size(), 40u);
  for (const auto& [step, kk] : k) EXPECT_EQ(kk, 16) << "step " << step;
}

TEST(ShapeSampling, ShapesThatChangeBetweenReadsAreDroppedAndEveryLaterStepRead) {
  // k is 16 up to step 2, then 32: the read of step 4 differs from step 0's, so the mapped
  // steps 1-3 lose their shapes, and from then on every step is read.
  const TraceData d = record_mm_steps(10, 4, [](int s) -> int64_t { return s < 2 ? 16 : 32; });
  EXPECT_TRUE(d.shape_sampling.every_step);
  EXPECT_EQ(d.shape_sampling.unmapped_steps, 3);
  EXPECT_EQ(d.shape_sampling.mapped_steps, 0);
  EXPECT_EQ(d.shape_sampling.read_steps, 7);  // 0, then 4-9
  const auto k = mm_k_per_step(d);
  EXPECT_EQ(k.at(0), 16);
  for (int s = 1; s <= 3; ++s) EXPECT_EQ(k.at(s), -1) << "step " << s << ": no shape, not a wrong one";
  for (int s = 4; s < 10; ++s) EXPECT_EQ(k.at(s), 32) << "step " << s;
}

TEST(ShapeSampling, ADifferentOpSequenceLeavesThatStepWithoutShapes) {
  TracerOptions o;
  o.level = Level::kOps;
  o.active_steps = 6;
  o.shape_interval = 8;
  Tracer tracer(o);
  tracer.start_window();
  const at::Tensor a = torch::ones({8, 8});
  for (int step = 0; step < 6; ++step) {
    tracer.begin_step(step, true);
    (void)torch::mm(a, a);
    if (step == 2) (void)torch::mm(a, a);  // one more op than the read step
    tracer.end_step();
  }
  tracer.stop_window();
  const TraceData d = tracer.take_data();
  EXPECT_EQ(d.shape_sampling.unmapped_steps, 1);
  EXPECT_TRUE(d.shape_sampling.every_step);
  EXPECT_EQ(d.shape_sampling.mapped_steps, 1);  // step 1, confirmed by step 3's read
  EXPECT_EQ(d.shape_sampling.read_steps, 4);    // 0, then 3-5
  for (const OpEvent& e : d.ops) {
    if (d.names[e.name_id] != "aten::mm") continue;
    EXPECT_EQ(e.shape_id < 0, e.step == 2) << "step " << e.step;
  }
}

}  // namespace
}  // namespace llmprof::profile
