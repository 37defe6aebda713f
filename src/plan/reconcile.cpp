// summary.json's "plan" section as figures: the plan of the run's own config beside what the run
// measured (plan::MemoryProbe), per component, with the ratio and whether it is off by more than
// kDiffersFraction, in rundir's record (rundir/plan_reconciliation.h), which rundir writes.
#include <cmath>

#include "llmprof/error.h"
#include "llmprof/plan/plan.h"
#include "llmprof/plan/probe.h"

namespace llmprof::plan {

namespace {

rundir::ReconciledComponent reconciled(const std::string& name,
                                       int64_t predicted,
                                       const std::optional<int64_t>& measured) {
  rundir::ReconciledComponent c{name, predicted, measured, std::nullopt, std::nullopt};
  if (!measured) return c;
  if (*measured <= 0) {
    c.differs = predicted != 0;
    return c;
  }
  c.ratio = static_cast<double>(predicted) / static_cast<double>(*measured);
  c.differs = std::fabs(*c.ratio - 1.0) > kDiffersFraction;
  return c;
}

}  // namespace

rundir::MemoryReconciliation reconcile(const config::Config& cfg,
                                       int64_t vocab_size,
                                       bool cuda,
                                       const Measured& m,
                                       CudaAllocator run_allocator) {
  const CudaAllocator allocator = cuda_allocator_for(cfg, run_allocator);
  rundir::MemoryReconciliation r;
  MemoryPlan p;
  try {
    p = plan_memory(cfg, PlanOptions{vocab_size, 1, cuda, allocator});
  } catch (const Error& e) {
    r.unplanned_reason = e.what();
    return r;
  }
  r.measured_source = m.source;
  if (m.measured_step > 0) r.measured_step = m.measured_step;
  r.reason = m.reason;
  r.definition =
      "measured: parameters, buffers and gradients from the tensors; optimizer state as the "
      "allocator's rise over step 1's optimizer phase plus the gradients it freed; "
      "saved_for_backward = live bytes at the start of step 2's backward minus its forward's "
      "start; peak = parameters + buffers + optimizer state + step 2's rise above its start";
  if (cuda) {
    r.definition +=
        "; peak_reserved = the caching allocator's peak reserved bytes, predicted with "
        "the " +
        std::string(allocator_name(allocator)) + " allocator as " + cuda_reserved_model(allocator);
  }
  r.components = {reconciled("parameters", p.parameter_bytes, m.parameters),
                  reconciled("buffers", p.buffer_bytes, m.buffers),
                  reconciled("gradients", p.gradient_bytes, m.gradients),
                  reconciled("optimizer_state", p.optimizer_state_bytes, m.optimizer_state),
                  reconciled("saved_for_backward", p.forward_end_bytes, m.forward_end),
                  reconciled("peak", p.peak_bytes, m.peak)};
  if (cuda) {
    r.components.push_back(reconciled("peak_reserved", p.peak_reserved_bytes, m.peak_reserved));
  }
  r.peak_phase = {p.peak_place.phase, p.peak_place.module, m.peak_phase};
  r.unmodelled_bytes = m.unmodelled;
  r.unmodelled_note = "peak RSS minus c10's live bytes at the step's peak: oneDNN/OpenBLAS "
                      "buffers, glibc caching, the program and its libraries";
  r.activations_per_block_bytes = p.activations_per_block_bytes;
  return r;
}

}  // namespace llmprof::plan
