// summary.json's "plan" section: the plan of the run's own config beside what the run measured
// (plan::MemoryProbe), per component, with the relative difference and whether it exceeds 10%.
#include <nlohmann/json.hpp>

#include <cmath>

#include "llmprof/error.h"
#include "llmprof/plan/plan.h"
#include "llmprof/plan/probe.h"

namespace llmprof::plan {

namespace {

using nlohmann::json;

json row(int64_t predicted, const std::optional<int64_t>& measured) {
  json r = {{"predicted_bytes", predicted}};
  if (!measured) {
    r["measured_bytes"] = nullptr;
    r["ratio"] = nullptr;
    r["differs"] = nullptr;
    return r;
  }
  r["measured_bytes"] = *measured;
  if (*measured <= 0) {
    r["ratio"] = nullptr;
    r["differs"] = predicted != 0;
    return r;
  }
  const double ratio = static_cast<double>(predicted) / static_cast<double>(*measured);
  r["ratio"] = ratio;
  r["differs"] = std::fabs(ratio - 1.0) > kDiffersFraction;
  return r;
}

}  // namespace

std::string reconcile_json(const config::Config& cfg, int64_t vocab_size, bool cuda,
                           const Measured& m) {
  json s;
  MemoryPlan p;
  try {
    p = plan_memory(cfg, PlanOptions{vocab_size, 1, cuda});
  } catch (const Error& e) {
    s = {{"predicted", nullptr}, {"reason", e.what()}};
    return s.dump();
  }
  s["schema_version"] = 1;
  s["measured_source"] = m.source;
  s["measured_step"] = m.measured_step > 0 ? json(m.measured_step) : json(nullptr);
  s["reason"] = m.reason.empty() ? json(nullptr) : json(m.reason);
  s["definition"] =
      "measured: parameters, buffers and gradients from the tensors; optimizer state as the "
      "allocator's rise over step 1's optimizer phase plus the gradients it freed; "
      "saved_for_backward = live bytes at the start of step 2's backward minus its forward's "
      "start; peak = parameters + buffers + optimizer state + step 2's rise above its start";
  json c;
  c["parameters"] = row(p.parameter_bytes, m.parameters);
  c["buffers"] = row(p.buffer_bytes, m.buffers);
  c["gradients"] = row(p.gradient_bytes, m.gradients);
  c["optimizer_state"] = row(p.optimizer_state_bytes, m.optimizer_state);
  c["saved_for_backward"] = row(p.forward_end_bytes, m.forward_end);
  c["peak"] = row(p.peak_bytes, m.peak);
  if (cuda) c["peak_reserved"] = row(p.peak_reserved_bytes, m.peak_reserved);
  s["components"] = c;
  s["peak_phase"] = {{"predicted", p.peak_place.phase},
                     {"predicted_module", p.peak_place.module},
                     {"measured", m.peak_phase.empty() ? json(nullptr) : json(m.peak_phase)}};
  s["unmodelled_bytes"] = m.unmodelled ? json(*m.unmodelled) : json(nullptr);
  s["unmodelled_note"] = "peak RSS minus c10's live bytes at the step's peak: oneDNN/OpenBLAS "
                         "buffers, glibc caching, the program and its libraries";
  s["activations_per_block_bytes"] = p.activations_per_block_bytes;
  return s.dump();
}

}  // namespace llmprof::plan
