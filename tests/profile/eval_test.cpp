// The tracer on real LibTorch ops: an eval pass run between recorded steps (ScopedEval) is
// marked, kept out of the per-step op figures, and dropped after a warm-up step; integer and
// tensor-list arguments are recorded for the ops whose bytes need them.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "llmprof/profile/analysis.h"
#include "llmprof/profile/bytes.h"
#include "llmprof/profile/tracer.h"

namespace llmprof::profile {
namespace {

double calls_of(const std::vector<OpRow>& rows, const std::string& op) {
  for (const auto& r : rows) {
    if (r.op == op) return r.calls;
  }
  return 0;
}

TEST(ScopedEval, EvalOpsAreMarkedAndLeftOutOfThePerStepFigures) {
  TracerOptions o;
  o.level = Level::kOps;
  o.active_steps = 3;
  o.max_events = 100000;
  Tracer tracer(o);
  tracer.start_window();
  const at::Tensor x = torch::ones({4, 8});
  for (int step = 0; step < 4; ++step) {  // step 0: the schedule's warm-up, discarded
    tracer.begin_step(step, step > 0);
    (void)torch::gelu(x);
    (void)torch::gelu(x);
    tracer.end_step();
    if (step == 0 || step == 2) {  // eval after the warm-up step (dropped) and after step 2
      const ScopedEval eval;
      for (int i = 0; i < 4; ++i) (void)torch::gelu(x);
    }
  }
  tracer.stop_window();
  const TraceData d = tracer.take_data();
  int step_calls = 0, eval_calls = 0;
  for (const OpEvent& e : d.ops) {
    if (d.names[e.name_id] != "aten::gelu") continue;
    if (e.phase == static_cast<uint8_t>(Phase::kEval)) {
      ++eval_calls;
      EXPECT_EQ(e.step, 2);
    } else {
      ++step_calls;
    }
  }
  EXPECT_EQ(step_calls, 6);
  EXPECT_EQ(eval_calls, 4) << "the pass after the warm-up step is dropped with it";
  ScopeFlops flops;
  flops.fill(-1);
  const Analysis a = analyze(d, {{1, 0, 0, 0}, {2, 0, 0, 0}, {3, 0, 0, 0}}, flops, 0);
  EXPECT_DOUBLE_EQ(calls_of(a.ops, "aten::gelu"), 2) << "was 4.67: both passes counted per step";
  EXPECT_EQ(a.n_evals, 1);
  EXPECT_DOUBLE_EQ(calls_of(a.eval_ops, "aten::gelu"), 4);
}

// The shape record of the first event named `op` (read every step).
ShapeRecord shapes_of(const std::string& op, void (*body)()) {
  TracerOptions o;
  o.level = Level::kOps;
  o.shape_interval = 1;
  o.max_events = 10000;
  Tracer tracer(o);
  tracer.start_window();
  tracer.begin_step(0, true);
  body();
  tracer.end_step();
  tracer.stop_window();
  const TraceData d = tracer.take_data();
  for (const OpEvent& e : d.ops) {
    if (d.names[e.name_id] == op && e.shape_id >= 0) return d.shapes[static_cast<size_t>(e.shape_id)];
  }
  ADD_FAILURE() << "no " << op << " with shapes";
  return {};
}

TEST(ShapeRecord, IntegerArgumentsAndTensorListsAreRecorded) {
  const ShapeRecord sel = shapes_of("aten::index_select", [] {
    (void)torch::index_select(torch::ones({10, 6}), 1, torch::zeros({3}, torch::kLong));
  });
  EXPECT_EQ(sel.scalar_type[1], ShapeRecord::kIntArg);
  EXPECT_EQ(sel.dims[1][0], 1);
  // 10 x 6 fp32, columns 3 of 6 picked: the index (3 x 8 bytes), 30 elements read and written.
  EXPECT_DOUBLE_EQ(*op_bytes("aten::index_select", sel), 24 + 2 * 30 * 4);
  const ShapeRecord cat = shapes_of("aten::cat", [] {
    (void)torch::cat({torch::ones({2, 3}), torch::ones({5, 3})});
  });
  EXPECT_EQ(cat.ndim[0], 2);
  EXPECT_EQ(cat.dims[1][0], 5);
  EXPECT_DOUBLE_EQ(*op_bytes("aten::cat", cat), 2 * (6 + 15) * 4);
  const ShapeRecord long_cat = shapes_of("aten::cat", [] {
    (void)torch::cat({torch::ones({1}), torch::ones({1}), torch::ones({1}), torch::ones({1}),
                      torch::ones({1})});
  });
  EXPECT_EQ(long_cat.ndim[3], ShapeRecord::kListCut);
  EXPECT_FALSE(op_bytes("aten::cat", long_cat).has_value()) << "five inputs, three recorded";
}

}  // namespace
}  // namespace llmprof::profile
