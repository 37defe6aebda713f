#include <gtest/gtest.h>

#include <cmath>

#include "llmprof/profile/analysis.h"
#include "llmprof/profile/bytes.h"
#include "llmprof/profile/events.h"
#include "llmprof/profile/phase.h"
#include "llmprof/profile/scope.h"
#include "llmprof/profile/stats.h"

namespace llmprof::profile {
namespace {

ShapeRecord shapes(std::initializer_list<std::vector<int64_t>> inputs) {
  ShapeRecord s;
  int i = 0;
  for (const auto& in : inputs) {
    s.ndim[i] = static_cast<int8_t>(in.size());
    for (size_t d = 0; d < in.size(); ++d) s.dims[i][d] = in[d];
    ++i;
  }
  return s;
}

TEST(MemoryPerPhase, OneRowPerStepAndPhaseWithTheHighestPeakAndTheLastEnd) {
  auto pm = [](int32_t step, Phase p, int64_t peak, int64_t end) {
    PhaseMemory m;
    m.step = step;
    m.phase = static_cast<uint8_t>(p);
    m.peak_allocated_bytes = peak;
    m.end_allocated_bytes = end;
    return m;
  };
  // Two micro-batches in step 1 (data, forward, backward twice), one in step 2.
  std::vector<PhaseMemory> in = {
      pm(1, Phase::kData, 8, 8),         pm(1, Phase::kForward, 900, 600),
      pm(1, Phase::kBackward, 1000, 40), pm(1, Phase::kData, 50, 48),
      pm(1, Phase::kForward, 700, 640),  pm(1, Phase::kBackward, 800, 80),
      pm(1, Phase::kOptimizer, 90, 80),  pm(2, Phase::kData, 81, 80)};
  std::vector<PhaseMemory> out = memory_per_phase(in);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].phase, static_cast<uint8_t>(Phase::kData));
  EXPECT_EQ(out[0].peak_allocated_bytes, 50);
  EXPECT_EQ(out[0].end_allocated_bytes, 48);
  EXPECT_EQ(out[1].peak_allocated_bytes, 900);
  EXPECT_EQ(out[1].end_allocated_bytes, 640);
  EXPECT_EQ(out[2].peak_allocated_bytes, 1000);
  EXPECT_EQ(out[2].end_allocated_bytes, 80);
  EXPECT_EQ(out[3].phase, static_cast<uint8_t>(Phase::kOptimizer));
  EXPECT_EQ(out[4].step, 2);
  EXPECT_EQ(out[4].end_allocated_bytes, 80);
}

TEST(OpFlops, MatmulFamilyMatchesTwoMkn) {
  EXPECT_DOUBLE_EQ(*op_flops("aten::mm", shapes({{64, 128}, {128, 32}})), 2.0 * 64 * 128 * 32);
  EXPECT_DOUBLE_EQ(*op_flops("aten::addmm", shapes({{32}, {64, 128}, {128, 32}})), 2.0 * 64 * 128 * 32);
  EXPECT_DOUBLE_EQ(*op_flops("aten::bmm", shapes({{8, 16, 4}, {8, 4, 16}})), 2.0 * 8 * 16 * 4 * 16);
  EXPECT_DOUBLE_EQ(*op_flops("aten::baddbmm", shapes({{8, 16, 16}, {8, 16, 4}, {8, 4, 16}})),
                   2.0 * 8 * 16 * 4 * 16);
}

TEST(OpFlops, ElementwiseOpsAndBackwardsCountPerElement) {
  EXPECT_DOUBLE_EQ(*op_flops("aten::_softmax", shapes({{4, 10}})), 5.0 * 40);
  EXPECT_DOUBLE_EQ(*op_flops("aten::gelu", shapes({{3, 7}})), 8.0 * 21);
  EXPECT_DOUBLE_EQ(*op_flops("aten::gelu_backward", shapes({{3, 7}, {3, 7}})), 16.0 * 21);
  EXPECT_DOUBLE_EQ(*op_flops("aten::_softmax_backward_data", shapes({{4, 10}, {4, 10}})), 10.0 * 40);
  EXPECT_DOUBLE_EQ(*op_flops("aten::add", shapes({{4, 10}})), 40) << "scalar other";
  EXPECT_DOUBLE_EQ(*op_flops("aten::mul", shapes({{4, 10}, {10}})), 40) << "broadcast";
  EXPECT_FALSE(op_flops("aten::div", shapes({{4, 10}})).has_value()) << "not modelled";
  EXPECT_FALSE(op_flops("aten::mm", shapes({{4, 10, 3}, {3, 3}})).has_value()) << "wrong rank";
}

TEST(OpFlops, FusedAttentionCountsLikeTorchsFlopCounter) {
  // q (B=2, H=3, T=8, D=4), k and v (2, 3, S=6, 4): forward 2 matmuls, backward 5.
  const double bhtsd = 2.0 * 3 * 8 * 6 * 4;
  EXPECT_DOUBLE_EQ(*op_flops("aten::_scaled_dot_product_flash_attention",
                             shapes({{2, 3, 8, 4}, {2, 3, 6, 4}, {2, 3, 6, 4}})),
                   4 * bhtsd);
  EXPECT_DOUBLE_EQ(*op_flops("aten::_scaled_dot_product_efficient_attention_backward",
                             shapes({{2, 3, 8, 4}, {2, 3, 8, 4}, {2, 3, 6, 4}, {2, 3, 6, 4}})),
                   10 * bhtsd);
  EXPECT_TRUE(is_matmul_op("aten::_scaled_dot_product_cudnn_attention"));
  // Their shapes are read at level ops without profile.record_shapes (an H200 run, cuDNN's
  // attention, counted 0.867 of the analytic FLOPs before: the attention matmuls were missing).
  EXPECT_TRUE(has_cost_model("aten::_scaled_dot_product_cudnn_attention"));
  EXPECT_TRUE(has_cost_model("aten::_scaled_dot_product_flash_attention_backward"));
  EXPECT_FALSE(has_cost_model("aten::scaled_dot_product_attention"));
  // The composite above the kernel op and the kernel's inner op: not counted a second time.
  EXPECT_FALSE(op_flops("aten::scaled_dot_product_attention",
                        shapes({{2, 3, 8, 4}, {2, 3, 6, 4}, {2, 3, 6, 4}})).has_value());
  EXPECT_FALSE(op_flops("aten::_flash_attention_forward",
                        shapes({{2, 8, 3, 4}, {2, 6, 3, 4}, {2, 6, 3, 4}})).has_value());
  EXPECT_FALSE(op_flops("aten::_scaled_dot_product_flash_attention_for_cpu_x",
                        shapes({{2, 3, 8, 4}, {2, 3, 6, 4}})).has_value());
}

TEST(NameTable, InternsOnceAndOverflowsToOther) {
  NameTable t(8, 64);
  uint32_t a = t.intern("aten::mm");
  std::string copy = "aten::mm";
  EXPECT_EQ(t.intern(copy.c_str()), a) << "same text, other pointer";
  EXPECT_EQ(t.name(a), "aten::mm");
  EXPECT_EQ(t.intern("aten::bmm"), a + 1);
  t.intern("x1");
  EXPECT_EQ(t.intern("x2"), 0u) << "table half full: new names map to (other)";
  EXPECT_TRUE(t.overflowed());
  EXPECT_EQ(t.name(0), "(other)");
}

int64_t fake_seq = 0;
int64_t peek_fake() { return fake_seq; }

TEST(ScopeRecorder, NestsAndRecordsSequenceRanges) {
  ScopeRecorder r(16, peek_fake);
  set_active_scope_recorder(&r);
  fake_seq = 10;
  {
    LLMPROF_SCOPE(Scope::kBlock, 0);
    fake_seq = 11;
    {
      LLMPROF_SCOPE(Scope::kAttn, 0);
      fake_seq = 14;
    }
    fake_seq = 15;
  }
  set_active_scope_recorder(nullptr);
  { LLMPROF_SCOPE(Scope::kMlp, 0); }  // inactive: not recorded
  ASSERT_EQ(r.events().size(), 2u);
  EXPECT_EQ(r.events()[0].seq_begin, 10);
  EXPECT_EQ(r.events()[0].seq_end, 15);
  EXPECT_EQ(r.events()[1].parent, 0);
  EXPECT_EQ(r.events()[1].seq_begin, 11);
  EXPECT_EQ(r.events()[1].seq_end, 14);
  EXPECT_LE(r.events()[0].start_ns, r.events()[1].start_ns);
  EXPECT_GE(r.events()[0].end_ns, r.events()[1].end_ns);
}

TEST(ScopeRecorder, FullBufferDropsAndCounts) {
  ScopeRecorder r(2, peek_fake);
  set_active_scope_recorder(&r);
  for (int i = 0; i < 5; ++i) {
    LLMPROF_SCOPE(Scope::kLn1, 0);
  }
  set_active_scope_recorder(nullptr);
  EXPECT_EQ(r.events().size(), 2u);
  EXPECT_EQ(r.dropped(), 3);
}

TEST(Analyze, AttributesBackwardNodesToTheCreatingScope) {
  TraceData d;
  d.steps = {0};
  d.names = {"(other)", "MmBackward0", "torch::autograd::AccumulateGrad"};
  ScopeEvent block;  // block[0] created seq 0..4, its attn.qkv seq 1..3
  block.scope = static_cast<int16_t>(Scope::kBlock);
  block.block = 0;
  block.start_ns = 0;
  block.end_ns = 1000;
  block.seq_begin = 0;
  block.seq_end = 4;
  ScopeEvent qkv = block;
  qkv.scope = static_cast<int16_t>(Scope::kAttnQkv);
  qkv.parent = 0;
  qkv.start_ns = 100;
  qkv.end_ns = 600;
  qkv.seq_begin = 1;
  qkv.seq_end = 3;
  d.scopes = {block, qkv};
  auto node = [](int64_t seq, uint32_t name, int64_t t0, int64_t t1) {
    OpEvent e;
    e.kind = OpEvent::kBackwardNode;
    e.seq = seq;
    e.name_id = name;
    e.start_ns = t0;
    e.end_ns = t1;
    return e;
  };
  d.ops = {node(2, 1, 2000, 2300), node(0, 1, 2300, 2400), node(-1, 2, 2400, 2450)};
  d.parents = {-1, -1, -1};
  ScopeFlops flops;
  flops.fill(-1);
  Analysis a = analyze(d, {{0, 0.001, 0.0005, 0}}, flops, 0);
  auto find = [&](const std::string& scope, const std::string& pass) -> const ModuleRow* {
    for (const auto& r : a.modules) {
      if (r.scope == scope && r.pass == pass) return &r;
    }
    return nullptr;
  };
  ASSERT_NE(find("attn.qkv", "backward"), nullptr);
  EXPECT_NEAR(find("attn.qkv", "backward")->total_ms, 0.0003, 1e-12);
  EXPECT_NEAR(find("block", "backward")->total_ms, 0.0004, 1e-12) << "qkv's node + block's own";
  EXPECT_NEAR(find("block", "backward")->self_ms, 0.0001, 1e-12);
  EXPECT_NEAR(find("block", "forward")->self_ms, 0.0005, 1e-12) << "1000 ns - 500 ns of qkv";
  ASSERT_NE(find("accumulate_grad", "backward"), nullptr);
  EXPECT_NEAR(a.backward_nodes_ms, 0.00045, 1e-12);
  EXPECT_NEAR(a.forward_scopes_ms, 0.001, 1e-12);
}

TEST(Analyze, RooflineOfOpsAndTheirModulesAndViewOpsCountedOnly) {
  // Forward: aten::mm [64,128]x[128,32] fp32 inside attn.qkv (1 ms). Backward: MmBackward0 (of
  // qkv's sequence number) around an aten::mm of the same shape (2 ms). aten::view: 3 calls
  // counted (not timed) inside the forward mm.
  TraceData d;
  d.steps = {0};
  d.names = {"(other)", "aten::mm", "MmBackward0", "aten::view"};
  ScopeEvent qkv;
  qkv.scope = static_cast<int16_t>(Scope::kAttnQkv);
  qkv.block = 0;
  qkv.start_ns = 0;
  qkv.end_ns = 1'100'000;
  qkv.seq_begin = 5;
  qkv.seq_end = 6;
  d.scopes = {qkv};
  ShapeRecord mm;
  mm.ndim[0] = mm.ndim[1] = 2;
  mm.scalar_type[0] = mm.scalar_type[1] = 6;  // fp32
  mm.dims[0][0] = 64, mm.dims[0][1] = 128, mm.dims[1][0] = 128, mm.dims[1][1] = 32;
  d.shapes = {mm};
  OpEvent fwd;
  fwd.name_id = 1, fwd.shape_id = 0, fwd.scope_event = 0, fwd.seq = 5;
  fwd.start_ns = 50'000, fwd.end_ns = 1'050'000;
  OpEvent node;
  node.kind = OpEvent::kBackwardNode, node.name_id = 2, node.seq = 5;
  node.start_ns = 2'000'000, node.end_ns = 4'100'000;
  OpEvent bwd = fwd;
  bwd.scope_event = -1, bwd.phase = static_cast<uint8_t>(Phase::kBackward);
  bwd.start_ns = 2'050'000, bwd.end_ns = 4'050'000;
  d.ops = {fwd, node, bwd};
  d.parents = {-1, -1, 1};
  d.untimed_calls = {0, 0, 0, 3};
  d.views_inside = {0, 3, 0, 0};
  ScopeFlops flops;
  flops.fill(-1);
  // Roofs 1 GFLOP/s and 1 GB/s: the mm's 524,288 FLOPs take 0.524 ms, its 57,344 bytes 0.057 ms.
  Analysis a = analyze(d, {{0, 1.1, 2.1, 0}}, flops, 1e9, 1e9);
  ASSERT_EQ(a.ops.size(), 3u);
  const OpRow& op = a.ops[0];
  EXPECT_EQ(op.op, "aten::mm");
  EXPECT_DOUBLE_EQ(*op.flops, 2 * 524288.0);
  EXPECT_DOUBLE_EQ(*op.roofline.bytes, 2 * 57344.0);
  EXPECT_NEAR(*op.roofline.roofline_ms, 2 * 0.524288, 1e-9);
  EXPECT_NEAR(*op.roofline.lost_ms, 3 - 2 * 0.524288, 1e-9);
  EXPECT_EQ(op.roofline.bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(op.view_calls, 3);
  const OpRow& view = a.ops.back();
  EXPECT_EQ(view.op, "aten::view");
  EXPECT_FALSE(view.timed);
  EXPECT_DOUBLE_EQ(view.calls, 3);
  EXPECT_DOUBLE_EQ(a.untimed_events_per_step, 3);
  const ModuleRow* fwd_row = nullptr;
  const ModuleRow* bwd_row = nullptr;
  for (const auto& r : a.modules) {
    if (r.scope == "attn.qkv") (r.pass == "forward" ? fwd_row : bwd_row) = &r;
  }
  ASSERT_NE(fwd_row, nullptr);
  ASSERT_NE(bwd_row, nullptr);
  EXPECT_NEAR(*fwd_row->roofline.roofline_ms, 0.524288, 1e-9);
  EXPECT_NEAR(*fwd_row->roofline.lost_ms, 1.1 - 0.524288, 1e-9);  // against the scope's self time
  EXPECT_NEAR(*bwd_row->roofline.roofline_ms, 0.524288, 1e-9) << "the mm inside the node";
  EXPECT_NEAR(*bwd_row->roofline.lost_ms, 2.1 - 0.524288, 1e-9);
  EXPECT_NEAR(*bwd_row->roofline.arithmetic_intensity, 524288.0 / 57344, 1e-9);
}

}  // namespace
}  // namespace llmprof::profile
