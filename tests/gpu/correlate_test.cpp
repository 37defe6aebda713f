#include "llmprof/gpu/correlate.h"

#include <gtest/gtest.h>

#include <string>

#include "support/gpu_fixture.h"
#include "llmprof/gpu/kernel_table.h"
#include "llmprof/output/csv.h"
#include "support/test_support.h"

namespace llmprof::gpu {
namespace {

constexpr double kTol = 1e-12;

GpuFixture correlation_fixture() {
  return read_fixture(std::string(LLMPROF_SOURCE_DIR) + "/tests/gpu/fixtures/correlation.jsonl");
}

// The fixture (tests/gpu/fixtures/correlation.jsonl), by hand:
//   ops     0 aten::linear [1000, 5000)  1 aten::addmm [1100, 4000) (inside 0)
//           2 aten::softmax [6000, 8000)
//   kernel  gemm     corr 1, launched at 1200 -> innermost open op: addmm (not linear)
//           bias_add corr 2, launched at 4200 -> addmm has ended: linear
//           softmax  corr 3 at 6100, corr 4 at 6500 -> softmax
//           orphan   corr 99: no runtime record -> unattributed
//   memcpy  corr 6, launched at 9000 outside every op -> runtime found, op unattributed
TEST(Correlate, KernelsMapToTheInnermostOpOpenAtLaunch) {
  const GpuFixture fx = correlation_fixture();
  const Correlation c = correlate(fx.gpu, fx.cpu_ops);
  ASSERT_EQ(c.kernels.size(), 5u);
  EXPECT_EQ(owner_op(c.kernels[0], fx.cpu_ops), "aten::addmm");
  EXPECT_EQ(owner_op(c.kernels[1], fx.cpu_ops), "aten::linear");
  EXPECT_EQ(owner_op(c.kernels[2], fx.cpu_ops), "aten::softmax");
  EXPECT_EQ(owner_op(c.kernels[3], fx.cpu_ops), "aten::softmax");
  EXPECT_EQ(owner_op(c.kernels[4], fx.cpu_ops), "(unattributed)");
  EXPECT_EQ(owner_scope(c.kernels[0], fx.cpu_ops), "attn.qkv");
  EXPECT_EQ(owner_scope(c.kernels[2], fx.cpu_ops), "attn.softmax");
  EXPECT_EQ(owner_scope(c.kernels[4], fx.cpu_ops), "(unattributed)");
  EXPECT_EQ(c.kernels[0].runtime, 0);
  EXPECT_EQ(c.kernels[4].runtime, -1);
  ASSERT_EQ(c.memcpys.size(), 1u);
  EXPECT_EQ(c.memcpys[0].runtime, 4);
  EXPECT_EQ(c.memcpys[0].op, -1);
  EXPECT_EQ(c.without_launch, 1);  // the orphan kernel
  EXPECT_EQ(c.without_op, 1);      // the copy
}

TEST(Correlate, OpsOnOtherThreadsDoNotOwnALaunch) {
  GpuFixture fx = correlation_fixture();
  for (auto& op : fx.cpu_ops) op.thread = 200;  // the launches stay on thread 100
  const Correlation c = correlate(fx.gpu, fx.cpu_ops);
  for (const Attribution& a : c.kernels) EXPECT_EQ(a.op, -1);
  EXPECT_EQ(c.without_op, 5);  // 4 launched kernels + the copy
}

// By hand, from the fixture (durations in us): gemm 10; bias_add 2; softmax 3 and 4; orphan 1;
// the HtoD copy 1.
TEST(AggregateGpu, KernelRowsMatchHandSums) {
  const GpuFixture fx = correlation_fixture();
  const GpuTables t = aggregate_gpu(fx.gpu, fx.cpu_ops, correlate(fx.gpu, fx.cpu_ops), 1);
  ASSERT_EQ(t.kernels.size(), 4u);
  EXPECT_EQ(t.kernels[0].kernel, "gemm");
  EXPECT_EQ(t.kernels[1].kernel, "softmax");
  EXPECT_EQ(t.kernels[2].kernel, "bias_add");
  EXPECT_EQ(t.kernels[3].kernel, "orphan");
  const KernelRow& s = t.kernels[1];
  EXPECT_NEAR(s.calls, 2, kTol);
  EXPECT_NEAR(s.total_us, 7, kTol);
  EXPECT_NEAR(s.mean_us, 3.5, kTol);
  EXPECT_NEAR(s.min_us, 3, kTol);
  EXPECT_NEAR(s.max_us, 4, kTol);
  EXPECT_EQ(s.grid, (Dim3{128, 1, 1}));
  EXPECT_EQ(s.registers, 64);
  EXPECT_EQ(s.shared_mem_bytes, 60000);
  // Occupancy by hand in occupancy_test.cpp: 128 threads, 64 regs, 60000 B -> 3 blocks = 0.1875.
  ASSERT_TRUE(s.est_occupancy.has_value());
  EXPECT_NEAR(*s.est_occupancy, 0.1875, kTol);
  EXPECT_EQ(s.owning_op, "aten::softmax");
  EXPECT_EQ(s.owning_scope, "attn.softmax");
  EXPECT_EQ(s.owners, 1);
  EXPECT_NEAR(*t.kernels[0].est_occupancy, 1.0, kTol);  // 256 threads, 32 regs, no smem
  EXPECT_EQ(t.kernels[3].owning_op, "(unattributed)");
  EXPECT_NEAR(t.kernel_ms, 0.020, kTol);
  EXPECT_NEAR(t.memcpy_ms, 0.001, kTol);
  EXPECT_EQ(t.unattributed_activities, 2);
}

TEST(AggregateGpu, OpAndScopeSumsMatchHandSums) {
  const GpuFixture fx = correlation_fixture();
  const GpuTables t = aggregate_gpu(fx.gpu, fx.cpu_ops, correlate(fx.gpu, fx.cpu_ops), 1);
  auto op_ms = [&](const std::string& op) {
    for (const OpGpuRow& r : t.ops) {
      if (r.op == op) return r.gpu_ms;
    }
    return -1.0;
  };
  ASSERT_EQ(t.ops.size(), 4u);
  EXPECT_EQ(t.ops[0].op, "aten::addmm");
  EXPECT_NEAR(op_ms("aten::addmm"), 0.010, kTol);
  EXPECT_NEAR(op_ms("aten::softmax"), 0.007, kTol);
  EXPECT_NEAR(op_ms("aten::linear"), 0.002, kTol);    // its own launch only, not addmm's
  EXPECT_NEAR(op_ms("(unattributed)"), 0.002, kTol);  // orphan kernel + the copy
  ASSERT_EQ(t.scopes.size(), 3u);
  EXPECT_EQ(t.scopes[0].scope, "attn.qkv");
  EXPECT_EQ(t.scopes[0].block, 0);
  EXPECT_EQ(t.scopes[0].pass, "forward");
  EXPECT_NEAR(t.scopes[0].gpu_ms, 0.012, kTol);  // gemm 10 us + bias_add 2 us
  EXPECT_NEAR(t.scopes[0].launches, 2, kTol);
  EXPECT_EQ(t.scopes[1].scope, "attn.softmax");
  EXPECT_NEAR(t.scopes[1].gpu_ms, 0.007, kTol);
  EXPECT_EQ(t.scopes[2].scope, "(unattributed)");
  EXPECT_EQ(t.scopes[2].block, -1);
  EXPECT_NEAR(t.scopes[2].gpu_ms, 0.002, kTol);
}

// Two windows merged are one over all their steps: the fixture as a 1-step window and again as a
// 3-step one hold its activity twice over 4 steps, so every per-step figure is half the 1-step
// one; per-call figures are unchanged.
TEST(MergeGpuTables, TwoWindowsAreOneOverAllTheirSteps) {
  const GpuFixture fx = correlation_fixture();
  const Correlation corr = correlate(fx.gpu, fx.cpu_ops);
  const GpuTables one = aggregate_gpu(fx.gpu, fx.cpu_ops, corr, 1);
  const GpuTables three = aggregate_gpu(fx.gpu, fx.cpu_ops, corr, 3);
  const GpuTables m = merge_gpu_tables(one, three);
  EXPECT_EQ(m.n_steps, 4);
  ASSERT_EQ(m.kernels.size(), one.kernels.size());
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const KernelRow& r = m.kernels[i];
    const KernelRow& o = one.kernels[i];  // same order: every total halves
    EXPECT_EQ(r.kernel, o.kernel);
    EXPECT_NEAR(r.calls, o.calls / 2, kTol) << r.kernel;
    EXPECT_NEAR(r.total_us, o.total_us / 2, kTol) << r.kernel;
    EXPECT_NEAR(r.mean_us, o.mean_us, kTol) << r.kernel;
    EXPECT_NEAR(r.min_us, o.min_us, kTol) << r.kernel;
    EXPECT_NEAR(r.max_us, o.max_us, kTol) << r.kernel;
    EXPECT_EQ(r.owning_op, o.owning_op);
    EXPECT_EQ(r.owning_scope, o.owning_scope);
  }
  EXPECT_NEAR(m.kernel_ms, one.kernel_ms / 2, kTol);
  EXPECT_NEAR(m.memcpy_ms, one.memcpy_ms / 2, kTol);
  EXPECT_EQ(m.unattributed_activities, 2 * one.unattributed_activities);
  ASSERT_EQ(m.ops.size(), one.ops.size());
  EXPECT_EQ(m.ops[0].op, "aten::addmm");
  EXPECT_NEAR(m.ops[0].gpu_ms, 0.005, kTol);
  ASSERT_EQ(m.scopes.size(), one.scopes.size());
  EXPECT_EQ(m.scopes[0].scope, "attn.qkv");
  EXPECT_NEAR(m.scopes[0].gpu_ms, 0.006, kTol);
  EXPECT_NEAR(m.scopes[0].launches, 1, kTol);
}

TEST(AggregateGpu, PerStepFiguresDivideByTheRecordedSteps) {
  const GpuFixture fx = correlation_fixture();
  const GpuTables t = aggregate_gpu(fx.gpu, fx.cpu_ops, correlate(fx.gpu, fx.cpu_ops), 2);
  EXPECT_EQ(t.n_steps, 2);
  EXPECT_NEAR(t.kernels[1].calls, 1, kTol);
  EXPECT_NEAR(t.kernels[1].total_us, 3.5, kTol);
  EXPECT_NEAR(t.kernels[1].mean_us, 3.5, kTol) << "per call, not per step";
  EXPECT_NEAR(t.kernels[1].max_us, 4, kTol);
  EXPECT_NEAR(t.kernel_ms, 0.010, kTol);
}

TEST(AggregateGpu, KernelRowsCarryTheLaunchConfigurationAndTheOwner) {
  const GpuFixture fx = correlation_fixture();
  const GpuTables t = aggregate_gpu(fx.gpu, fx.cpu_ops, correlate(fx.gpu, fx.cpu_ops), 1);
  ASSERT_EQ(t.kernels.size(), 4u);
  const KernelRow& r = t.kernels[1];  // kernels.csv's rows[2] (rundir::write_kernels)
  EXPECT_EQ(r.kernel, "softmax");
  EXPECT_EQ(r.calls, 2);
  EXPECT_EQ(r.total_us, 7);
  EXPECT_EQ(r.mean_us, 3.5);
  EXPECT_EQ(r.min_us, 3);
  EXPECT_EQ(r.max_us, 4);
  EXPECT_EQ(format_dim3(r.grid), "128x1x1");
  EXPECT_EQ(format_dim3(r.block), "128x1x1");
  EXPECT_EQ(r.registers, 64);
  EXPECT_EQ(r.shared_mem_bytes, 60000);
  EXPECT_EQ(r.est_occupancy.value_or(-1), 0.1875);
  EXPECT_EQ(r.owning_op, "aten::softmax");
  EXPECT_EQ(r.owning_scope, "attn.softmax");
  EXPECT_EQ(r.owners, 1);
}

}  // namespace
}  // namespace llmprof::gpu
