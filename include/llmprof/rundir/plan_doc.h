// `llmprof plan --format json` as one typed document: the predicted memory by component, the
// largest batch, the roofline step and the techniques table. plan predicts (llmprof/plan/plan.h)
// and converts its PlanReport; rundir writes and reads the text. Schema kPlanSchemaVersion
// (rundir/files.h); fields in docs/plan_json.md. Nullopt is JSON null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::rundir {

struct PlanDocDevice {
  std::string name, product, source;
  int64_t capacity_bytes = 0, usable_bytes = 0;
};

struct PlanDocModule {
  std::string module, dtype;  // "attn.softmax", fp32 | bf16 | fp16 | bool | mixed
  int64_t bytes = 0;
};

struct PlanDocTechnique {
  std::string technique;
  // Where the row's model states come from: llmprof's model, the ZeRO paper's formulas or
  // DeepSpeed's estimators; the formula itself (null: llmprof's own accounting).
  std::string model_state_source;
  std::optional<std::string> model_state_formula;
  bool predicted_only = false;
  int64_t peak_bytes = 0, model_state_bytes = 0, activation_bytes = 0;
  int64_t activation_peak_bytes = 0;  // the most activations live at once in the step
  bool fits = false;
  int64_t largest_batch = 0;  // the largest micro-batch that fits with the row's techniques
  int64_t micro_batch = 0, accumulation = 1;
  std::optional<double> step_ms;  // null: no peaks for the device
};

struct PlanDoc {
  int schema_version = 0;  // as read; the writer writes kPlanSchemaVersion
  PlanDocDevice device;
  int64_t parameters = 0;
  std::map<std::string, int64_t> components_at_peak_bytes;  // component name -> bytes
  int64_t activations_bytes = 0, activations_per_block_bytes = 0, activation_peak_bytes = 0;
  std::vector<PlanDocModule> block_modules;
  int64_t peak_bytes = 0, peak_reserved_bytes = 0;
  std::string peak_reserved_note;
  // CUDA only (null on a CPU): the allocator and its figures.
  std::optional<std::string> allocator;
  std::optional<int64_t> workspace_bytes, fragmentation_bytes, largest_tensor_bytes;
  std::string peak_phase, peak_module;
  bool fits = false;
  int64_t largest_batch = 0;
  double flops_per_step = 0;
  std::optional<double> step_ms;            // null: no peaks for the device
  std::string step_ms_label;                // "roofline lower bound" | "calibrated on RUN ..."
  std::optional<double> calibration_ratio;  // --calibrate: measured / roofline
  // "none" (--optimizer-states none: weights and gradients only, the AdamW rows beside in
  // techniques_adamw) or "as configured".
  std::string optimizer_states;
  std::vector<PlanDocTechnique> techniques;
  std::optional<std::vector<PlanDocTechnique>> techniques_adamw;  // null unless "none"
  std::vector<std::string> technique_notes;
  std::vector<std::string> notes;

  // Read back, not written: fields this version does not know.
  std::map<std::string, std::string> unknown;
};

// The document's text: keys in a fixed (sorted) order, two-space indent, no final newline (the
// command prints one).
std::string plan_doc_text(const PlanDoc& d);
// Parses a plan JSON text; errors name `file`: invalid JSON, a missing schema_version, device,
// peak_bytes, fits or techniques, a field of the wrong type, a newer schema_version.
PlanDoc parse_plan_doc(const std::string& text, const std::string& file);
// docs/plan_json.md: every field, its type and when it is written, from the writer.
std::string plan_doc_fields_doc();

}  // namespace llmprof::rundir
