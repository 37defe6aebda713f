// The roofline of ops and modules counts each FLOP, byte and nanosecond at one level: an op's own
// model (less that of the modelled ops nested in it) against its self time; ops without a model
// are unmodelled time, never lost; an eval pass's ops stay out of every per-step figure.
#include <gtest/gtest.h>

#include <string>

#include "llmprof/profile/analysis.h"

namespace llmprof::profile {
namespace {

// One recorded step: attn.scores[0] (0..11 us) runs
//   aten::clone [250] fp32 (0..5 us) around aten::copy_ [250] <- [250] (0.2..4.7 us),
//   aten::mul_(x, 0.125) (5..8.5 us) around aten::mul_(x, 0-dim tensor) (5.2..8.2 us),
//   aten::masked_fill_ without recorded shapes (8.5..10.5 us).
// Roofs 1 GFLOP/s and 1 GB/s: a FLOP or a byte takes 1 ns at the roof.
TraceData scores_step() {
  TraceData d;
  d.steps = {0};
  d.names = {"(other)", "aten::clone", "aten::copy_", "aten::mul_", "aten::masked_fill_"};
  ScopeEvent scores;
  scores.scope = static_cast<int16_t>(Scope::kAttnScores);
  scores.block = 0;
  scores.start_ns = 0;
  scores.end_ns = 11'000;
  d.scopes = {scores};
  const auto fp32 = [](std::initializer_list<std::initializer_list<int64_t>> inputs) {
    ShapeRecord s;
    int i = 0;
    for (const auto& dims : inputs) {
      s.ndim[i] = static_cast<int8_t>(dims.size());
      s.scalar_type[i] = 6;
      int k = 0;
      for (int64_t v : dims) s.dims[i][k++] = v;
      ++i;
    }
    return s;
  };
  d.shapes = {fp32({{250}}), fp32({{250}, {250}}), fp32({{250}}), fp32({{250}, {}})};
  const auto op = [](uint32_t name, int32_t shape, int64_t t0, int64_t t1, int64_t child) {
    OpEvent e;
    e.name_id = name;
    e.shape_id = shape;
    e.scope_event = 0;
    e.phase = static_cast<uint8_t>(Phase::kForward);
    e.start_ns = t0;
    e.end_ns = t1;
    e.child_ns = child;
    return e;
  };
  d.ops = {op(1, 0, 0, 5'000, 4'500),     op(2, 1, 200, 4'700, 0),
           op(3, 2, 5'000, 8'500, 3'000), op(3, 3, 5'200, 8'200, 0),
           op(4, -1, 8'500, 10'500, 0)};
  d.parents = {-1, 0, -1, 2, -1};
  return d;
}

const OpRow& op_row(const Analysis& a, const std::string& name) {
  for (const auto& r : a.ops) {
    if (r.op == name) return r;
  }
  throw std::runtime_error("no op row " + name);
}

Analysis analyze_scores(const TraceData& d) {
  ScopeFlops flops;
  flops.fill(-1);
  return analyze(d, {{0, 0.011, 0, 0}}, flops, 1e9, 1e9);
}

TEST(RooflineLevels, NestedOpsCountTheirBytesAndTimeOnceAgainstSelfTime) {
  const Analysis a = analyze_scores(scores_step());
  // clone's 2,000 bytes are its copy_'s: none of its own, so its 0.5 us of self time (the
  // allocation) is all above the roofline; copy_: 2,000 bytes = 2 us at the roof, 4.5 us taken.
  const OpRow& clone = op_row(a, "aten::clone");
  EXPECT_DOUBLE_EQ(*clone.roofline.bytes, 0);
  EXPECT_DOUBLE_EQ(*clone.roofline.roofline_ms, 0);
  EXPECT_NEAR(*clone.roofline.lost_ms, 0.0005, 1e-12) << "was 0.003: its total against its copy's";
  const OpRow& copy = op_row(a, "aten::copy_");
  EXPECT_DOUBLE_EQ(*copy.roofline.bytes, 2000);
  EXPECT_NEAR(*copy.roofline.lost_ms, 0.0045 - 0.002, 1e-12);
  // mul_(Scalar) 2,000 bytes and 250 FLOPs, all done by the mul_(Tensor) inside: 1,000 + 4 +
  // 1,000 bytes, 250 FLOPs, 2.004 us at the roof. The row: self 0.5 + 3 us against 2.004.
  const OpRow& mul = op_row(a, "aten::mul_");
  EXPECT_DOUBLE_EQ(mul.calls, 2);
  EXPECT_NEAR(mul.self_ms, 0.0035, 1e-12);
  EXPECT_NEAR(mul.total_ms, 0.0065, 1e-12);
  EXPECT_DOUBLE_EQ(*mul.flops, 250) << "each FLOP once";
  EXPECT_DOUBLE_EQ(*mul.roofline.bytes, 2004);
  EXPECT_NEAR(*mul.roofline.roofline_ms, 0.002004, 1e-12);
  EXPECT_NEAR(*mul.roofline.lost_ms, 0.0035 - 0.002004, 1e-12);
  EXPECT_DOUBLE_EQ(*a.counted_other_flops, 250);
  double lost = 0;
  for (const auto& r : a.ops) {
    if (!r.roofline.lost_ms) continue;
    EXPECT_GE(*r.roofline.lost_ms, 0) << r.op;
    EXPECT_LE(*r.roofline.lost_ms, r.self_ms + 1e-15) << r.op;
    lost += *r.roofline.lost_ms;
  }
  EXPECT_LE(lost, 0.011) << "the ops' lost time fits in the step";
}

TEST(RooflineLevels, OpsWithoutAModelAreUnmodelledTimeNeverLost) {
  const Analysis a = analyze_scores(scores_step());
  const OpRow& fill = op_row(a, "aten::masked_fill_");  // no shapes: no model
  EXPECT_FALSE(fill.roofline.lost_ms.has_value());
  const ModuleRow* scores = nullptr;
  for (const auto& r : a.modules) {
    if (r.scope == "attn.scores" && r.pass == "forward") scores = &r;
  }
  ASSERT_NE(scores, nullptr);
  // 11 us of self time: 2 us in masked_fill_ (unmodelled), 2 + 2.004 us at the roof (copy_ and
  // the inner mul_; clone and the outer mul_ own nothing), the rest lost.
  EXPECT_NEAR(scores->self_ms, 0.011, 1e-12);
  EXPECT_NEAR(*scores->roofline.unmodelled_ms, 0.002, 1e-12);
  EXPECT_NEAR(*scores->roofline.roofline_ms, 0.004004, 1e-12);
  EXPECT_NEAR(*scores->roofline.lost_ms, 0.011 - 0.002 - 0.004004, 1e-12)
      << "was 0.007: masked_fill_'s time counted as lost";
  // The achieved rate is of the modelled time: 4,004 bytes in 9 us.
  EXPECT_NEAR(*scores->roofline.achieved_gb_per_s, 4004 / 9e-6 * 1e-9, 1e-9);
}

TEST(RooflineLevels, EvalOpsGetRowsOfTheirOwnAndStayOutOfTheStepFigures) {
  TraceData d = scores_step();
  const Analysis before = analyze_scores(d);
  // An eval pass after the step: two aten::mul_ calls with shapes, outside every scope.
  d.names.push_back("aten::gelu");
  for (int i = 0; i < 2; ++i) {
    OpEvent e;
    e.name_id = i == 0 ? 3 : 5;
    e.shape_id = 2;
    e.phase = static_cast<uint8_t>(Phase::kEval);
    e.start_ns = 20'000 + i * 10'000;
    e.end_ns = 29'000 + i * 10'000;
    d.ops.push_back(e);
    d.parents.push_back(-1);
  }
  const Analysis a = analyze_scores(d);
  EXPECT_DOUBLE_EQ(a.events_per_step, before.events_per_step);
  EXPECT_DOUBLE_EQ(op_row(a, "aten::mul_").calls, 2) << "the step's two, not three";
  EXPECT_DOUBLE_EQ(op_row(a, "aten::mul_").self_share, op_row(before, "aten::mul_").self_share);
  EXPECT_DOUBLE_EQ(*op_row(a, "aten::mul_").roofline.lost_ms,
                   *op_row(before, "aten::mul_").roofline.lost_ms);
  EXPECT_DOUBLE_EQ(*a.counted_other_flops, 250);
  for (const auto& r : a.ops) EXPECT_NE(r.op, "aten::gelu");
  EXPECT_EQ(a.n_evals, 1);
  ASSERT_EQ(a.eval_ops.size(), 2u);
  for (const auto& r : a.eval_ops) {
    EXPECT_DOUBLE_EQ(r.calls, 1) << r.op;
    EXPECT_NEAR(r.self_ms, 0.009, 1e-12) << r.op;
    EXPECT_DOUBLE_EQ(r.self_share, 0.5) << r.op;
    EXPECT_FALSE(r.roofline.lost_ms.has_value()) << r.op;
  }
}

}  // namespace
}  // namespace llmprof::profile
