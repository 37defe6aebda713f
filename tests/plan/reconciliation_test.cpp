// summary.json's plan section as figures (plan::reconcile): each component's predicted bytes are
// the planner's, the ratio is predicted / measured, "differs" past 10%; unmeasured components and
// an unplannable config say so instead of inventing a figure (torch-free: the planner alone).
#include <gtest/gtest.h>

#include "llmprof/config/config.h"
#include "llmprof/plan/plan.h"
#include "llmprof/plan/probe.h"

namespace llmprof::plan {
namespace {

config::Config reconciled_gpt() {
  config::Config c;
  c.model.n_layer = 2;
  c.model.n_embd = 32;
  c.model.n_head = 2;
  c.model.block_size = 16;
  c.model.vocab_size = 50;
  c.train.batch_size = 2;
  return c;
}

const rundir::ReconciledComponent& named(const rundir::MemoryReconciliation& r,
                                         const std::string& name) {
  for (const rundir::ReconciledComponent& c : r.components) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no component " + name);
}

TEST(Reconcile, RatiosArePredictedOverMeasuredAndDifferPastTenPercent) {
  const config::Config cfg = reconciled_gpt();
  const MemoryPlan p = plan_memory(cfg, PlanOptions{0, 1, false});
  Measured m;
  m.parameters = p.parameter_bytes;                           // exact: ratio 1
  m.gradients = p.gradient_bytes * 2;                         // ratio 0.5: differs
  m.optimizer_state = p.optimizer_state_bytes * 10 / 11 + 1;  // ratio just under 1.1: agrees
  m.peak = 0;                                                 // measured as nothing: no ratio
  m.peak_phase = "backward";
  m.measured_step = 2;
  m.source = "c10 CPU allocator reports";
  const rundir::MemoryReconciliation r = reconcile(cfg, 0, false, m);
  EXPECT_TRUE(r.unplanned_reason.empty());
  ASSERT_EQ(r.components.size(), 6u);  // no peak_reserved on the CPU
  EXPECT_EQ(named(r, "parameters").ratio, 1.0);
  EXPECT_EQ(named(r, "parameters").differs, false);
  EXPECT_EQ(named(r, "gradients").ratio, 0.5);
  EXPECT_EQ(named(r, "gradients").differs, true);
  EXPECT_LT(*named(r, "optimizer_state").ratio, 1.1);
  EXPECT_EQ(named(r, "optimizer_state").differs, false);
  EXPECT_FALSE(named(r, "peak").ratio.has_value());
  EXPECT_EQ(named(r, "peak").differs, p.peak_bytes != 0);
  EXPECT_EQ(named(r, "peak").predicted_bytes, p.peak_bytes);
  // Never measured: null, not 0, and no verdict.
  EXPECT_FALSE(named(r, "buffers").measured_bytes.has_value());
  EXPECT_FALSE(named(r, "buffers").differs.has_value());
  EXPECT_EQ(r.measured_step, 2);
  EXPECT_EQ(r.peak_phase.predicted, p.peak_place.phase);
  EXPECT_EQ(r.peak_phase.measured, "backward");
  EXPECT_EQ(r.activations_per_block_bytes, p.activations_per_block_bytes);
}

TEST(Reconcile, CudaAddsTheReservedPeakAndNothingMeasuredHasNoStep) {
  Measured m;
  m.reason = "LLMPROF_PLAN_PROBE=off";
  const rundir::MemoryReconciliation r = reconcile(reconciled_gpt(), 0, true, m);
  ASSERT_EQ(r.components.size(), 7u);
  EXPECT_EQ(r.components.back().name, "peak_reserved");
  EXPECT_FALSE(r.measured_step.has_value());
  EXPECT_EQ(r.reason, "LLMPROF_PLAN_PROBE=off");
}

TEST(Reconcile, AConfigThePlannerCannotPlanGivesOnlyTheReason) {
  config::Config cfg = reconciled_gpt();
  cfg.train.cuda_graphs = true;  // not modelled
  const rundir::MemoryReconciliation r = reconcile(cfg, 0, false, Measured{});
  EXPECT_NE(r.unplanned_reason.find("train.cuda_graphs"), std::string::npos) << r.unplanned_reason;
  EXPECT_TRUE(r.components.empty());
}

}  // namespace
}  // namespace llmprof::plan
