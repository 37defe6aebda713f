// llmprof plan's JSON, one writer and one reader (include/llmprof/rundir/plan_doc.h).
#include "llmprof/rundir/plan_doc.h"

#include <fmt/format.h>

#include "doc_lists.h"
#include "json_doc.h"
#include "llmprof/rundir/files.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::ObjectReader;
using detail::opt;

Json techniques_json(const std::vector<PlanDocTechnique>& rows) {
  Json out = Json::array();
  for (const PlanDocTechnique& t : rows) {
    out.push_back({{"technique", t.technique},
                   {"model_state_source", t.model_state_source},
                   {"model_state_formula", opt(t.model_state_formula)},
                   {"predicted_only", t.predicted_only},
                   {"peak_bytes", t.peak_bytes},
                   {"model_state_bytes", t.model_state_bytes},
                   {"activation_bytes", t.activation_bytes},
                   {"activation_peak_bytes", t.activation_peak_bytes},
                   {"fits", t.fits},
                   {"largest_batch", t.largest_batch},
                   {"micro_batch", t.micro_batch},
                   {"accumulation", t.accumulation},
                   {"step_ms", opt(t.step_ms)}});
  }
  return out;
}

Json memory_json(const PlanDoc& d) {
  Json modules = Json::array();
  for (const PlanDocModule& m : d.block_modules) {
    modules.push_back({{"module", m.module}, {"dtype", m.dtype}, {"bytes", m.bytes}});
  }
  Json comp = Json::object();
  for (const auto& [name, bytes] : d.components_at_peak_bytes) comp[name] = bytes;
  return {{"parameters", d.parameters},
          {"components_at_peak_bytes", std::move(comp)},
          {"activations_bytes", d.activations_bytes},
          {"activations_per_block_bytes", d.activations_per_block_bytes},
          {"activation_peak_bytes", d.activation_peak_bytes},
          {"block_modules", std::move(modules)},
          {"peak_bytes", d.peak_bytes},
          {"peak_reserved_bytes", d.peak_reserved_bytes},
          {"peak_reserved_note", d.peak_reserved_note},
          {"allocator", opt(d.allocator)},
          {"workspace_bytes", opt(d.workspace_bytes)},
          {"fragmentation_bytes", opt(d.fragmentation_bytes)},
          {"largest_tensor_bytes", opt(d.largest_tensor_bytes)},
          {"peak_phase", d.peak_phase},
          {"peak_module", d.peak_module}};
}

void read_memory(ObjectReader& doc, detail::DocContext& ctx, PlanDoc& d) {
  d.parameters = doc.integer("parameters").value_or(0);
  if (std::optional<ObjectReader> comp = doc.object("components_at_peak_bytes")) {
    for (const auto& [name, v] : comp->raw_object().items()) {
      if (const std::optional<int64_t> b = comp->integer(name)) {
        d.components_at_peak_bytes[name] = *b;
      }
    }
  }
  d.activations_bytes = doc.integer("activations_bytes").value_or(0);
  d.activations_per_block_bytes = doc.integer("activations_per_block_bytes").value_or(0);
  d.activation_peak_bytes = doc.integer("activation_peak_bytes").value_or(0);
  d.block_modules =
      detail::object_list<PlanDocModule>(doc, ctx, "block_modules", [](ObjectReader& m) {
        return PlanDocModule{m.text("module").value_or(""), m.text("dtype").value_or(""),
                             m.integer("bytes").value_or(0)};
      });
  d.peak_bytes = doc.integer("peak_bytes").value_or(0);
  d.peak_reserved_bytes = doc.integer("peak_reserved_bytes").value_or(0);
  d.peak_reserved_note = doc.text("peak_reserved_note").value_or("");
  d.allocator = doc.text("allocator");
  d.workspace_bytes = doc.integer("workspace_bytes");
  d.fragmentation_bytes = doc.integer("fragmentation_bytes");
  d.largest_tensor_bytes = doc.integer("largest_tensor_bytes");
  d.peak_phase = doc.text("peak_phase").value_or("");
  d.peak_module = doc.text("peak_module").value_or("");
}

PlanDocTechnique read_technique(ObjectReader& t) {
  PlanDocTechnique r;
  r.technique = t.text("technique").value_or("");
  r.model_state_source = t.text("model_state_source").value_or("");
  r.model_state_formula = t.text("model_state_formula");
  r.activation_peak_bytes = t.integer("activation_peak_bytes").value_or(0);
  r.largest_batch = t.integer("largest_batch").value_or(0);
  r.predicted_only = t.boolean("predicted_only").value_or(false);
  r.peak_bytes = t.integer("peak_bytes").value_or(0);
  r.model_state_bytes = t.integer("model_state_bytes").value_or(0);
  r.activation_bytes = t.integer("activation_bytes").value_or(0);
  r.fits = t.boolean("fits").value_or(false);
  r.micro_batch = t.integer("micro_batch").value_or(0);
  r.accumulation = t.integer("accumulation").value_or(1);
  r.step_ms = t.number("step_ms");
  return r;
}

}  // namespace

std::string plan_doc_text(const PlanDoc& d) {
  Json j = memory_json(d);
  j["schema_version"] = kPlanSchemaVersion;
  j["device"] = {{"name", d.device.name},
                 {"product", d.device.product},
                 {"capacity_bytes", d.device.capacity_bytes},
                 {"usable_bytes", d.device.usable_bytes},
                 {"source", d.device.source}};
  j["fits"] = d.fits;
  j["largest_batch"] = d.largest_batch;
  j["flops_per_step"] = d.flops_per_step;
  j["step_ms"] = opt(d.step_ms);
  j["step_ms_label"] = d.step_ms_label;
  j["calibration_ratio"] = opt(d.calibration_ratio);
  j["optimizer_states"] = d.optimizer_states;
  j["techniques"] = techniques_json(d.techniques);
  j["techniques_adamw"] =
      d.techniques_adamw ? techniques_json(*d.techniques_adamw) : Json(nullptr);
  j["technique_notes"] = d.technique_notes;
  j["notes"] = d.notes;
  detail::put_unknown(j, d.unknown);
  return j.dump(2);
}

PlanDoc parse_plan_doc(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  PlanDoc d;
  detail::DocContext ctx{file, &d.unknown, nullptr};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kPlanSchemaVersion);
  for (const char* key : {"device", "peak_bytes", "fits", "techniques"}) doc.require(key);
  if (std::optional<ObjectReader> dev = doc.object("device")) {
    d.device =
        PlanDocDevice{dev->text("name").value_or(""), dev->text("product").value_or(""),
                      dev->text("source").value_or(""), dev->integer("capacity_bytes").value_or(0),
                      dev->integer("usable_bytes").value_or(0)};
    dev->keep_unknown();
  }
  read_memory(doc, ctx, d);
  d.fits = doc.boolean("fits").value_or(false);
  d.largest_batch = doc.integer("largest_batch").value_or(0);
  d.flops_per_step = doc.number("flops_per_step").value_or(0);
  d.step_ms = doc.number("step_ms");
  d.step_ms_label = doc.text("step_ms_label").value_or("");
  d.calibration_ratio = doc.number("calibration_ratio");
  d.optimizer_states = doc.text("optimizer_states").value_or("");
  d.techniques = detail::object_list<PlanDocTechnique>(doc, ctx, "techniques", read_technique);
  if (doc.has("techniques_adamw") && !doc.raw_object().at("techniques_adamw").is_null()) {
    d.techniques_adamw =
        detail::object_list<PlanDocTechnique>(doc, ctx, "techniques_adamw", read_technique);
  } else {
    doc.raw("techniques_adamw");
  }
  d.technique_notes = detail::string_list(doc, "technique_notes");
  d.notes = detail::string_list(doc, "notes");
  doc.keep_unknown();
  return d;
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
