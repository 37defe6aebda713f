// summary.json's context sections (rundir/summary_context.h) written and read: data, model,
// resumed_from, init_from, cuda_graphs, plan, and distributed.comm. Every key a producer wrote
// before these were typed is written again, in the same form, so older files rewrite
// byte-identical.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "summary_sections.h"
#include "llmprof/rundir/files.h"

namespace llmprof::rundir::detail {

namespace {

// ---------------------------------------------------------------------------------------------
// data

Json file_json(const DataFileFigures& f) {
  Json bad = Json::array();
  for (const BadRowExample& b : f.bad_row_examples) {
    bad.push_back({{"line", b.line}, {"reason", b.reason}});
  }
  return {{"path", f.path},           {"format", f.format},
          {"rows_read", f.rows_read}, {"records_used", f.records_used},
          {"bad_rows", f.bad_rows},   {"bad_row_examples", bad}};
}

DataFileFigures read_file(ObjectReader& o) {
  DataFileFigures f;
  f.path = o.text("path").value_or("");
  f.format = o.text("format").value_or("");
  f.rows_read = o.integer("rows_read").value_or(0);
  f.records_used = o.integer("records_used").value_or(0);
  f.bad_rows = o.integer("bad_rows").value_or(0);
  for (ObjectReader& b : o.objects("bad_row_examples")) {
    f.bad_row_examples.push_back({b.integer("line").value_or(0), b.text("reason").value_or("")});
    b.keep_unknown();
  }
  return f;
}

Json data_json(const DataFigures& d) {
  Json j = Json::object();
  if (d.corpus) {
    const CorpusFigures& c = *d.corpus;
    j = {{"source", c.source},
         {"bytes", c.bytes},
         {"train_tokens", c.train_tokens},
         {"val_tokens", c.val_tokens}};
  }
  if (d.datasets) {
    const DatasetFigures& s = *d.datasets;
    j["train_file"] = file_json(s.train_file);
    j["val_file"] = s.val_file ? file_json(*s.val_file) : Json(nullptr);
    if (!s.val_file) j["val_split"] = s.val_split;
    j["train_sequences"] = s.train_sequences;
    j["train_tokens"] = s.train_tokens;
    j["train_truncated"] = s.train_truncated;
    j["val_sequences"] = s.val_sequences;
    j["val_tokens"] = s.val_tokens;
    j["val_truncated"] = s.val_truncated;
    if (s.mlm_predictions_per_sequence) {
      j["mlm_predictions_per_sequence"] = *s.mlm_predictions_per_sequence;
    }
  }
  return j;
}

// The encoder tasks' form has train_file; lm's has source.
DataFigures read_data(ObjectReader& o) {
  DataFigures d;
  if (!o.has("train_file")) {
    d.corpus = CorpusFigures{o.text("source").value_or(""), o.integer("bytes").value_or(0),
                             o.integer("train_tokens").value_or(0),
                             o.integer("val_tokens").value_or(0)};
    return d;
  }
  DatasetFigures& s = d.datasets.emplace();
  s.train_file = read_section<DataFileFigures>(o, "train_file", read_file).value_or(s.train_file);
  s.val_file = read_section<DataFileFigures>(o, "val_file", read_file);
  s.val_split = o.text("val_split").value_or("");
  s.train_sequences = o.integer("train_sequences").value_or(0);
  s.train_tokens = o.integer("train_tokens").value_or(0);
  s.train_truncated = o.integer("train_truncated").value_or(0);
  s.val_sequences = o.integer("val_sequences").value_or(0);
  s.val_tokens = o.integer("val_tokens").value_or(0);
  s.val_truncated = o.integer("val_truncated").value_or(0);
  s.mlm_predictions_per_sequence = o.integer("mlm_predictions_per_sequence");
  return d;
}

// ---------------------------------------------------------------------------------------------
// model

Json model_json(const ModelFigures& m) {
  Json j = {{"type", m.type}};
  if (m.gqa) {
    const GqaSummary& g = *m.gqa;
    j["gqa"] = {{"n_layer", opt(g.n_layer)},
                {"n_head", opt(g.n_head)},
                {"n_kv_head", opt(g.n_kv_head)},
                {"head_dim", opt(g.head_dim)},
                {"block_size", opt(g.block_size)},
                {"kv_element_bytes", opt(g.kv_element_bytes)},
                {"kv_cache_bytes_per_token", opt(g.kv_cache_bytes_per_token)},
                {"mha_kv_cache_bytes_per_token", opt(g.mha_kv_cache_bytes_per_token)},
                {"attention_flops_per_token", opt(g.attention_flops_per_token)},
                {"mha_attention_flops_per_token", opt(g.mha_attention_flops_per_token)},
                {"kv_projection_flops_per_token", opt(g.kv_projection_flops_per_token)},
                {"mha_kv_projection_flops_per_token", opt(g.mha_kv_projection_flops_per_token)},
                {"method", g.method}};
  }
  return j;
}

GqaSummary read_gqa(ObjectReader& o) {
  GqaSummary g;
  g.n_layer = o.integer("n_layer");
  g.n_head = o.integer("n_head");
  g.n_kv_head = o.integer("n_kv_head");
  g.head_dim = o.integer("head_dim");
  g.block_size = o.integer("block_size");
  g.kv_element_bytes = o.integer("kv_element_bytes");
  g.kv_cache_bytes_per_token = o.integer("kv_cache_bytes_per_token");
  g.mha_kv_cache_bytes_per_token = o.integer("mha_kv_cache_bytes_per_token");
  g.attention_flops_per_token = o.number("attention_flops_per_token");
  g.mha_attention_flops_per_token = o.number("mha_attention_flops_per_token");
  g.kv_projection_flops_per_token = o.number("kv_projection_flops_per_token");
  g.mha_kv_projection_flops_per_token = o.number("mha_kv_projection_flops_per_token");
  g.method = o.text("method").value_or("");
  return g;
}

ModelFigures read_model(ObjectReader& o) {
  return {o.text("type").value_or(""), read_section<GqaSummary>(o, "gqa", read_gqa)};
}

// ---------------------------------------------------------------------------------------------
// resumed_from, init_from, cuda_graphs

InitFromFigures read_init_from(ObjectReader& o) {
  InitFromFigures f;
  f.path = o.text("path").value_or("");
  f.task = o.text("task").value_or("");
  f.step = o.integer("step").value_or(0);
  f.loaded = o.integer("loaded").value_or(0);
  f.missing = string_list(o, "missing");
  f.unexpected = string_list(o, "unexpected");
  return f;
}

// ---------------------------------------------------------------------------------------------
// plan

Json plan_json(const MemoryReconciliation& r) {
  if (!r.unplanned_reason.empty()) return {{"predicted", nullptr}, {"reason", r.unplanned_reason}};
  Json components = Json::object();
  for (const ReconciledComponent& c : r.components) {
    components[c.name] = {{"predicted_bytes", opt(c.predicted_bytes)},
                          {"measured_bytes", opt(c.measured_bytes)},
                          {"ratio", opt(c.ratio)},
                          {"differs", opt(c.differs)}};
  }
  return {{"schema_version", kSummaryPlanSchemaVersion},
          {"measured_source", r.measured_source},
          {"measured_step", opt(r.measured_step)},
          {"reason", text_or_null(r.reason)},
          {"definition", r.definition},
          {"components", components},
          {"peak_phase",
           {{"predicted", r.peak_phase.predicted},
            {"predicted_module", r.peak_phase.predicted_module},
            {"measured", text_or_null(r.peak_phase.measured)}}},
          {"unmodelled_bytes", opt(r.unmodelled_bytes)},
          {"unmodelled_note", r.unmodelled_note},
          {"activations_per_block_bytes", opt(r.activations_per_block_bytes)}};
}

ReconciledComponent read_component(ObjectReader& o) {
  ReconciledComponent c;
  c.predicted_bytes = o.integer("predicted_bytes");
  c.measured_bytes = o.integer("measured_bytes");
  c.ratio = o.number("ratio");
  c.differs = o.boolean("differs");
  return c;
}

// The unplanned form is {"predicted": null, "reason": ...}.
MemoryReconciliation read_plan(ObjectReader& o) {
  MemoryReconciliation r;
  if (o.raw("predicted") != nullptr) {
    r.unplanned_reason = o.text("reason").value_or("");
    return r;
  }
  o.integer("schema_version");
  r.measured_source = o.text("measured_source").value_or("");
  r.measured_step = o.integer("measured_step");
  r.reason = o.text("reason").value_or("");
  r.definition = o.text("definition").value_or("");
  if (std::optional<ObjectReader> cs = o.object("components")) {
    for (const auto& item : cs->raw_object().items()) {
      if (item.value().is_null()) continue;  // kept as it is, below
      ReconciledComponent c = *read_section<ReconciledComponent>(*cs, item.key(), read_component);
      c.name = item.key();
      r.components.push_back(c);
    }
    cs->keep_unknown();
  }
  read_section<bool>(o, "peak_phase", [&r](ObjectReader& p) {
    r.peak_phase = {p.text("predicted").value_or(""), p.text("predicted_module").value_or(""),
                    p.text("measured").value_or("")};
    return true;
  });
  r.unmodelled_bytes = o.integer("unmodelled_bytes");
  r.unmodelled_note = o.text("unmodelled_note").value_or("");
  r.activations_per_block_bytes = o.integer("activations_per_block_bytes");
  return r;
}

}  // namespace

void put_context(Json& doc, const RunContext& c) {
  if (c.data) doc["data"] = data_json(*c.data);
  if (c.model) doc["model"] = model_json(*c.model);
  if (c.resumed_from) {
    doc["resumed_from"] = {{"path", c.resumed_from->path}, {"step", c.resumed_from->step}};
  }
  if (c.init_from) {
    const InitFromFigures& f = *c.init_from;
    doc["init_from"] = {{"path", f.path},       {"task", f.task},
                        {"step", f.step},       {"loaded", f.loaded},
                        {"missing", f.missing}, {"unexpected", f.unexpected}};
  }
  if (c.cuda_graphs) {
    doc["cuda_graphs"] = {{"captured_before_step", c.cuda_graphs->captured_before_step},
                          {"forward_ms", c.cuda_graphs->forward_ms}};
  }
  if (c.plan) doc["plan"] = plan_json(*c.plan);
}

RunContext read_context(ObjectReader& doc) {
  RunContext c;
  c.data = read_section<DataFigures>(doc, "data", read_data);
  c.model = read_section<ModelFigures>(doc, "model", read_model);
  c.resumed_from = read_section<ResumeFigures>(doc, "resumed_from", [](ObjectReader& o) {
    return ResumeFigures{o.text("path").value_or(""), o.integer("step").value_or(0)};
  });
  c.init_from = read_section<InitFromFigures>(doc, "init_from", read_init_from);
  c.cuda_graphs = read_section<CudaGraphFigures>(doc, "cuda_graphs", [](ObjectReader& o) {
    return CudaGraphFigures{o.integer("captured_before_step").value_or(0),
                            o.text("forward_ms").value_or("")};
  });
  c.plan = read_section<MemoryReconciliation>(doc, "plan", read_plan);
  return c;
}

// ---------------------------------------------------------------------------------------------
// distributed.comm

// What a reader takes from the drift figures, in words: measured, below resolution, or unknown.
std::string clock_drift_text(const CommFigures& s) {
  if (s.clock_drift_ns_per_s_max) {
    return fmt::format("measured: up to {:.0f} ns/s (uncertainty up to {:.0f} ns/s)",
                       *s.clock_drift_ns_per_s_max,
                       s.clock_drift_uncertainty_ns_per_s_max.value_or(0.0));
  }
  if (s.clock_drift_uncertainty_ns_per_s_max) {
    return fmt::format(
        "below resolution: |drift| within the uncertainty of {:.0f} ns/s (the "
        "clock estimates' residuals over the time between them)",
        *s.clock_drift_uncertainty_ns_per_s_max);
  }
  return "unknown: no end-of-run clock estimate";
}

Json comm_json(const CommFigures& s) {
  Json straggler;  // null: one rank, or no collective
  if (s.straggler) {
    const CommStraggler& g = *s.straggler;
    straggler = {{"rank", g.rank},
                 {"last_launches", g.last_count},
                 {"collectives", g.collectives},
                 {"lag_ms", g.lag_ms},
                 {"phase", g.phase ? Json(std::string(profile::phase_name(*g.phase))) : Json()},
                 {"phase_excess_ms", g.phase ? Json(g.phase_excess_ms) : Json()}};
  }
  Json j = {{"steps", s.steps},
            {"step_ms_median", opt(s.step_ms_median)},
            {"exposed_comm_ms_median", opt(s.exposed_comm_ms_median)},
            {"exposed_share", opt(s.exposed_share)},
            {"comm_ms_median", opt(s.comm_ms_median)},
            {"overlap", opt(s.overlap)},
            {"latency_ms_median", opt(s.latency_ms_median)},
            {"wait_ms_median", opt(s.wait_ms_median)},
            {"algbw_gb_per_s_median", opt(s.algbw_gb_per_s_median)},
            {"busbw_gb_per_s_median", opt(s.busbw_gb_per_s_median)},
            {"straggler", straggler},
            {"clock_residual_us_max", opt(s.clock_residual_us_max)},
            {"clock_drift_ns_per_s_max", opt(s.clock_drift_ns_per_s_max)},
            {"note", s.note}};
  // Written where a second rank's clock was measured (a one-rank group has no drift to state,
  // and its files keep their form).
  if (s.clock_drift_uncertainty_ns_per_s_max || s.clock_drift_ns_per_s_max) {
    j["clock_drift_uncertainty_ns_per_s_max"] = opt(s.clock_drift_uncertainty_ns_per_s_max);
    j["clock_drift"] = clock_drift_text(s);
  }
  return j;
}

CommStraggler read_straggler(ObjectReader& o) {
  CommStraggler g;
  g.rank = o.integer("rank").value_or(0);
  g.last_count = o.integer("last_launches").value_or(0);
  g.collectives = o.integer("collectives").value_or(0);
  g.lag_ms = o.number("lag_ms").value_or(0);
  if (const std::optional<std::string> phase = o.text("phase")) {
    g.phase = parse_step_phase(*phase);
    if (!g.phase) o.fail("phase", "data, forward, backward or optimizer");
  }
  g.phase_excess_ms = o.number("phase_excess_ms").value_or(0);
  return g;
}

CommFigures read_comm(ObjectReader& o) {
  CommFigures s;
  s.steps = o.integer("steps").value_or(0);
  s.step_ms_median = o.number("step_ms_median");
  s.exposed_comm_ms_median = o.number("exposed_comm_ms_median");
  s.exposed_share = o.number("exposed_share");
  s.comm_ms_median = o.number("comm_ms_median");
  s.overlap = o.number("overlap");
  s.latency_ms_median = o.number("latency_ms_median");
  s.wait_ms_median = o.number("wait_ms_median");
  s.algbw_gb_per_s_median = o.number("algbw_gb_per_s_median");
  s.busbw_gb_per_s_median = o.number("busbw_gb_per_s_median");
  s.straggler = read_section<CommStraggler>(o, "straggler", read_straggler);
  s.clock_residual_us_max = o.number("clock_residual_us_max");
  s.clock_drift_ns_per_s_max = o.number("clock_drift_ns_per_s_max");
  s.clock_drift_uncertainty_ns_per_s_max = o.number("clock_drift_uncertainty_ns_per_s_max");
  o.text("clock_drift");  // derived from the two above
  s.note = o.text("note").value_or("");
  return s;
}

}  // namespace llmprof::rundir::detail
