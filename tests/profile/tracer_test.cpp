// The tracer on real LibTorch ops: shape sampling (shapes read in some steps, mapped op by op onto
// the others, and dropped when a later read shows they changed) and view sampling (view calls
// inside ops that run only views, counted from the read steps in the others).
#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <string_view>

#include "llmprof/profile/tracer.h"

namespace llmprof::profile {
namespace {

// Records `steps` kept steps of `body(step)` at ops level, reading shapes every `interval` steps.
template <typename Body>
TraceData record_steps(int steps, int interval, Body body) {
  TracerOptions o;
  o.level = Level::kOps;
  o.active_steps = static_cast<size_t>(steps);
  o.shape_interval = interval;
  o.max_events = 100000;
  Tracer tracer(o);
  tracer.start_window();
  for (int step = 0; step < steps; ++step) {
    tracer.begin_step(step, true);
    body(step);
    tracer.end_step();
  }
  tracer.stop_window();
  return tracer.take_data();
}

// One mm per step ([n, k] x [k, n]; k = k_of(step)).
TraceData record_mm_steps(int steps, int interval, int64_t (*k_of)(int)) {
  return record_steps(steps, interval, [&](int step) {
    const int64_t k = k_of(step);
    (void)torch::mm(torch::ones({8, k}), torch::ones({k, 8}));
  });
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

// View sampling: one bmm per step (batch of [16, 16] x [16, 16] matrices; batch =
// batch_of(step)) and an add. LibTorch's CPU bmm
// without MKL multiplies the batch matrix by matrix, selecting each operand and the result.
TraceData record_bmm_steps(int steps, int interval, int64_t (*batch_of)(int)) {
  return record_steps(steps, interval, [&](int step) {
    const int64_t b = batch_of(step);
    const at::Tensor c = torch::bmm(torch::ones({b, 16, 16}), torch::ones({b, 16, 16}));
    (void)c.add(c);
  });
}

std::map<std::string, int64_t> by_name(const TraceData& d, const std::vector<int64_t>& counts) {
  std::map<std::string, int64_t> m;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != 0) m[d.names[i]] = counts[i];
  }
  return m;
}

int64_t fixed_batch(int) { return 24; }

// Skips on a LibTorch whose CPU bmm runs no views per matrix (built with MKL): nothing to hide.
#define SKIP_WITHOUT_VIEWS_IN_BMM(d)                                                          \
  if (by_name(d, (d).views_inside)["aten::bmm"] < 16 * 10) {                                  \
    GTEST_SKIP() << "this LibTorch's CPU bmm runs fewer than 16 view calls per call";         \
  }

TEST(ViewSampling, ViewsHiddenBetweenReadStepsAreCountedAsIfObservedEveryStep) {
  const TraceData all = record_bmm_steps(10, 1, fixed_batch);
  SKIP_WITHOUT_VIEWS_IN_BMM(all);
  EXPECT_EQ(all.view_sampling.hidden_calls, 0);  // every step reads: every view observed
  const TraceData d = record_bmm_steps(10, 4, fixed_batch);
  // Read: 0, 4, 9; the seven others ran their bmm with RecordFunction off inside.
  EXPECT_EQ(d.view_sampling.hidden_calls, 7);
  EXPECT_EQ(d.view_sampling.mapped_steps, 7);
  EXPECT_EQ(d.view_sampling.lost_steps, 0);
  EXPECT_EQ(d.view_sampling.unconfirmed_steps, 0);
  const int64_t per_bmm = by_name(all, all.views_inside)["aten::bmm"] / 10;
  EXPECT_EQ(d.view_sampling.counted_views, 7 * per_bmm);
  EXPECT_EQ(by_name(d, d.untimed_calls), by_name(all, all.untimed_calls));
  EXPECT_EQ(by_name(d, d.views_inside), by_name(all, all.views_inside));
  EXPECT_GE(by_name(d, d.untimed_calls)["aten::select"], 3 * 24 * 10);  // a and b and the result
}

TEST(ViewSampling, ViewsThatChangeBeforeTheNextReadAreNotCountedAndSaidSo) {
  // Batch 24 up to step 5, then 32: the same op sequence, so steps 5-8 hide their views with
  // step 4's counts, and step 9's read finds other shapes: those four steps' views are lost.
  const TraceData d = record_bmm_steps(10, 4, [](int s) -> int64_t { return s < 5 ? 24 : 32; });
  SKIP_WITHOUT_VIEWS_IN_BMM(d);
  EXPECT_EQ(d.view_sampling.mapped_steps, 3);  // 1-3, confirmed by step 4
  EXPECT_EQ(d.view_sampling.lost_steps, 4);
  EXPECT_TRUE(d.shape_sampling.every_step);
  const TraceData all = record_bmm_steps(10, 1, [](int s) -> int64_t { return s < 5 ? 24 : 32; });
  EXPECT_LT(by_name(d, d.views_inside)["aten::bmm"], by_name(all, all.views_inside)["aten::bmm"]);
}

TEST(ViewSampling, AnotherRecordFunctionObserverKeepsEveryViewObserved) {
  static int64_t seen = 0, in_bmm = 0;  // selects inside a bmm, as the other observer sees them
  auto other = at::RecordFunctionCallback(
      [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        const std::string_view name = fn.name();
        if (name == "aten::bmm") ++in_bmm;
        if (name == "aten::select" && in_bmm > 0) ++seen;
        return nullptr;
      },
      [](const at::RecordFunction& fn, at::ObserverContext*) {
        if (std::string_view(fn.name()) == "aten::bmm") --in_bmm;
      });
  other.scopes({at::RecordScope::FUNCTION});
  const at::CallbackHandle h = at::addGlobalCallback(other);
  const TraceData d = record_bmm_steps(10, 4, fixed_batch);
  at::removeCallback(h);
  SKIP_WITHOUT_VIEWS_IN_BMM(d);
  EXPECT_EQ(d.view_sampling.hidden_calls, 0);
  EXPECT_EQ(seen, by_name(d, d.untimed_calls)["aten::select"]);
}

}  // namespace
}  // namespace llmprof::profile
