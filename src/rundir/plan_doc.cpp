// llmprof plan's JSON, one writer and one reader (include/llmprof/rundir/plan_doc.h).
#include "llmprof/rundir/plan_doc.h"

#include <fmt/format.h>

#include "doc_tables.h"
#include "json_fields.h"
#include "llmprof/rundir/files.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::member;
using detail::ObjectReader;
using detail::Presence;

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
const detail::JsonFields<PlanDocDevice>& device_fields() {
  static const detail::JsonFields<PlanDocDevice> f = {
      member("name", &PlanDocDevice::name), member("product", &PlanDocDevice::product),
      member("source", &PlanDocDevice::source),
      member("capacity_bytes", &PlanDocDevice::capacity_bytes),
      member("usable_bytes", &PlanDocDevice::usable_bytes)};
  return f;
}

const detail::JsonFields<PlanDocModule>& module_fields() {
  static const detail::JsonFields<PlanDocModule> f = {member("module", &PlanDocModule::module),
                                                      member("dtype", &PlanDocModule::dtype),
                                                      member("bytes", &PlanDocModule::bytes)};
  return f;
}

const detail::JsonFields<PlanDocTechnique>& technique_fields() {
  using T = PlanDocTechnique;
  static const detail::JsonFields<T> f = {
      member("technique", &T::technique),
      member("model_state_source", &T::model_state_source),
      member("model_state_formula", &T::model_state_formula),
      member("activation_peak_bytes", &T::activation_peak_bytes),
      member("largest_batch", &T::largest_batch),
      member("predicted_only", &T::predicted_only),
      member("peak_bytes", &T::peak_bytes),
      member("model_state_bytes", &T::model_state_bytes),
      member("activation_bytes", &T::activation_bytes),
      member("fits", &T::fits),
      member("micro_batch", &T::micro_batch),
      member("accumulation", &T::accumulation),
      member("step_ms", &T::step_ms)};
  return f;
}

// component name -> bytes: one key per memory component.
detail::JsonField<PlanDoc> components_field() {
  return detail::converted<PlanDoc>(
      "components_at_peak_bytes", Presence::kOptional,
      [](const PlanDoc& d) {
        Json comp = Json::object();
        for (const auto& [name, bytes] : d.components_at_peak_bytes) comp[name] = bytes;
        return comp;
      },
      [](PlanDoc& d, ObjectReader& doc, DocContext&, const std::string& key) {
        if (std::optional<ObjectReader> comp = doc.object(key)) {
          for (const auto& [name, v] : comp->raw_object().items()) {
            if (const std::optional<int64_t> b = comp->integer(name)) {
              d.components_at_peak_bytes[name] = *b;
            }
          }
        }
      });
}

}  // namespace

namespace detail {
const JsonFields<PlanDoc>& plan_doc_fields() {
  static const JsonFields<PlanDoc> f = {
      object("device", &PlanDoc::device, device_fields(), Presence::kRequired),
      member("parameters", &PlanDoc::parameters),
      components_field(),
      member("activations_bytes", &PlanDoc::activations_bytes),
      member("activations_per_block_bytes", &PlanDoc::activations_per_block_bytes),
      member("activation_peak_bytes", &PlanDoc::activation_peak_bytes),
      list("block_modules", &PlanDoc::block_modules, module_fields()),
      member("peak_bytes", &PlanDoc::peak_bytes, Presence::kRequired),
      member("peak_reserved_bytes", &PlanDoc::peak_reserved_bytes),
      member("peak_reserved_note", &PlanDoc::peak_reserved_note),
      member("allocator", &PlanDoc::allocator),
      member("workspace_bytes", &PlanDoc::workspace_bytes),
      member("fragmentation_bytes", &PlanDoc::fragmentation_bytes),
      member("largest_tensor_bytes", &PlanDoc::largest_tensor_bytes),
      member("peak_phase", &PlanDoc::peak_phase),
      member("peak_module", &PlanDoc::peak_module),
      member("fits", &PlanDoc::fits, Presence::kRequired),
      member("largest_batch", &PlanDoc::largest_batch),
      member("flops_per_step", &PlanDoc::flops_per_step),
      member("step_ms", &PlanDoc::step_ms),
      member("step_ms_label", &PlanDoc::step_ms_label),
      member("calibration_ratio", &PlanDoc::calibration_ratio),
      member("optimizer_states", &PlanDoc::optimizer_states),
      list("techniques", &PlanDoc::techniques, technique_fields(), Presence::kRequired),
      optional_list("techniques_adamw", &PlanDoc::techniques_adamw, technique_fields()),
      member("technique_notes", &PlanDoc::technique_notes),
      member("notes", &PlanDoc::notes)};
  return f;
}
}  // namespace detail

// The document's text has no final newline (the command prints one).
std::string plan_doc_text(const PlanDoc& d) {
  return detail::write_doc(d, kPlanSchemaVersion, detail::plan_doc_fields()).dump(2);
}

PlanDoc parse_plan_doc(const std::string& text, const std::string& file) {
  return detail::read_doc<PlanDoc>(text, file, kPlanSchemaVersion, detail::plan_doc_fields());
}

std::string plan_doc_fields_doc() {
  PlanDoc d;
  d.components_at_peak_bytes = {{"<component>", 1}};
  d.block_modules = {PlanDocModule{"text", "text", 1}};
  d.allocator = "text";
  d.workspace_bytes = d.fragmentation_bytes = d.largest_tensor_bytes = 1;
  d.step_ms = d.calibration_ratio = 1.5;
  const PlanDocTechnique row{"text", "text", "text", false, 1, 1, 1, 1, false, 1, 1, 1, 1.5};
  d.optimizer_states = "text";
  d.techniques = {row};
  d.techniques_adamw = std::vector<PlanDocTechnique>{row};
  d.technique_notes = {"text"};
  d.notes = {"text"};
  const std::string heading = fmt::format(
      "# llmprof plan JSON fields (schema_version {})\n\n"
      "What `llmprof plan --format json` prints. Generated from `rundir::PlanDoc` "
      "(include/llmprof/rundir/plan_doc.h) through its writer; `tests/rundir/plan_doc_test.cpp` "
      "checks that this file matches. Keys are written in this (sorted) order. "
      "`components_at_peak_bytes` has one key per memory component (parameters, gradients, "
      "optimizer state, activations, ...). `allocator`, `workspace_bytes`, "
      "`fragmentation_bytes` and `largest_tensor_bytes` are null on a CPU; `step_ms` (and a "
      "technique's) is null without peaks for the device; `calibration_ratio` is null without "
      "`--calibrate`; `techniques_adamw` is null unless `--optimizer-states none` (then it holds "
      "the AdamW rows beside the weights-and-gradients ones). Read: `schema_version`, `device`, `peak_bytes`, `fits` and `techniques` "
      "are required.\n\n",
      kPlanSchemaVersion);
  const Json none = Json::parse(plan_doc_text(PlanDoc{}));
  return detail::field_table_page(heading, Json::parse(plan_doc_text(d)), none);
}

}  // namespace llmprof::rundir
