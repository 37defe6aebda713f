// The memory plan of a run's own config beside what the run measured (plan::MemoryProbe), per
// component: summary.json's "plan" section (docs/summary.md). A record of the run directory, so
// rundir defines it; plan, above rundir, fills it (plan::reconcile).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::rundir {

// One component, predicted against measured bytes.
struct ReconciledComponent {
  std::string name;  // parameters | buffers | gradients | optimizer_state | saved_for_backward |
                     // peak | peak_reserved (cuda)
  std::optional<int64_t> predicted_bytes;
  std::optional<int64_t> measured_bytes;  // nullopt: not measured
  std::optional<double> ratio;            // predicted / measured; nullopt when measured <= 0
  std::optional<bool> differs;            // |ratio - 1| > kDiffersFraction; nullopt: unmeasured
};

// Where the step's live bytes peak.
struct PeakPhase {
  std::string predicted, predicted_module;
  std::string measured;  // "" when unmeasured (null)
};

struct MemoryReconciliation {
  // The planner could not plan the config: only this is written ({"predicted": null, "reason"}).
  std::string unplanned_reason;
  std::string measured_source;
  std::optional<int64_t> measured_step;  // nullopt: nothing measured
  std::string reason;                    // why nothing was measured ("" is null)
  std::string definition;                // what "measured" means per component
  std::vector<ReconciledComponent> components;
  PeakPhase peak_phase;
  std::optional<int64_t> unmodelled_bytes;
  std::string unmodelled_note;
  std::optional<int64_t> activations_per_block_bytes;
};

}  // namespace llmprof::rundir
