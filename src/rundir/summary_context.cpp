// summary.json's context sections (rundir/summary_context.h) as field tables: data, model,
// resumed_from, init_from, cuda_graphs and plan, written into the document itself. Every key a
// producer wrote before these were typed is written again, in the same form, so older files
// rewrite byte-identical.
#include <string>
#include <vector>

#include "json_forms.h"
#include "llmprof/rundir/files.h"
#include "summary_sections.h"

namespace llmprof::rundir::detail {

namespace {

// ---------------------------------------------------------------------------------------------
// data: lm's corpus, or the encoder tasks' dataset files

const JsonFields<CorpusFigures>& corpus_fields() {
  using C = CorpusFigures;
  static const JsonFields<C> f = {member("source", &C::source), member("bytes", &C::bytes),
                                  member("train_tokens", &C::train_tokens),
                                  member("val_tokens", &C::val_tokens)};
  return f;
}

const JsonFields<BadRowExample>& bad_row_fields() {
  static const JsonFields<BadRowExample> f = {member("line", &BadRowExample::line),
                                              member("reason", &BadRowExample::reason)};
  return f;
}

const JsonFields<DataFileFigures>& data_file_fields() {
  using F = DataFileFigures;
  static const JsonFields<F> f = {member("path", &F::path),
                                  member("format", &F::format),
                                  member("rows_read", &F::rows_read),
                                  member("records_used", &F::records_used),
                                  member("bad_rows", &F::bad_rows),
                                  list("bad_row_examples", &F::bad_row_examples, bad_row_fields())};
  return f;
}

// train_file first: its presence tells this form from the corpus's.
const JsonFields<DatasetFigures>& dataset_fields() {
  using S = DatasetFigures;
  static const JsonFields<S> f = {
      object("train_file", &S::train_file, data_file_fields()),
      section("val_file", &S::val_file, data_file_fields()),  // null: split from the training set
      only_when(member("val_split", &S::val_split), [](const S& s) { return !s.val_file; }),
      member("train_sequences", &S::train_sequences),
      member("train_tokens", &S::train_tokens),
      member("train_truncated", &S::train_truncated),
      member("val_sequences", &S::val_sequences),
      member("val_tokens", &S::val_tokens),
      member("val_truncated", &S::val_truncated),
      member_if_set("mlm_predictions_per_sequence", &S::mlm_predictions_per_sequence)};
  return f;
}

// One of the two forms (the dataset files' keys win where both are set).
JsonField<RunContext> data_field() {
  return {"data", Presence::kOptional,
          [](const RunContext& c) {
            if (!c.data) return not_written();
            Json j =
                c.data->corpus ? write_object(*c.data->corpus, corpus_fields()) : Json::object();
            if (c.data->datasets) j.update(write_object(*c.data->datasets, dataset_fields()));
            return j;
          },
          [](RunContext& c, ObjectReader& o, DocContext& ctx, const std::string& key) {
            c.data = read_section<DataFigures>(o, key, [&ctx](ObjectReader& d) {
              DataFigures f;
              if (d.has(dataset_fields().front().key)) {
                read_object(f.datasets.emplace(), d, ctx, dataset_fields());
              } else {
                read_object(f.corpus.emplace(), d, ctx, corpus_fields());
              }
              return f;
            });
          },
          [] { return keys_of(corpus_fields(), dataset_fields()); }};
}

// ---------------------------------------------------------------------------------------------
// model, resumed_from, init_from, cuda_graphs

const JsonFields<GqaSummary>& gqa_fields() {
  using G = GqaSummary;
  static const JsonFields<G> f = {
      member("n_layer", &G::n_layer),
      member("n_head", &G::n_head),
      member("n_kv_head", &G::n_kv_head),
      member("head_dim", &G::head_dim),
      member("block_size", &G::block_size),
      member("kv_element_bytes", &G::kv_element_bytes),
      member("kv_cache_bytes_per_token", &G::kv_cache_bytes_per_token),
      member("mha_kv_cache_bytes_per_token", &G::mha_kv_cache_bytes_per_token),
      member("attention_flops_per_token", &G::attention_flops_per_token),
      member("mha_attention_flops_per_token", &G::mha_attention_flops_per_token),
      member("kv_projection_flops_per_token", &G::kv_projection_flops_per_token),
      member("mha_kv_projection_flops_per_token", &G::mha_kv_projection_flops_per_token),
      member("method", &G::method)};
  return f;
}

const JsonFields<ModelFigures>& model_figure_fields() {
  static const JsonFields<ModelFigures> f = {
      member("type", &ModelFigures::type), section_if_set("gqa", &ModelFigures::gqa, gqa_fields())};
  return f;
}

const JsonFields<ResumeFigures>& resume_fields() {
  static const JsonFields<ResumeFigures> f = {member("path", &ResumeFigures::path),
                                              member("step", &ResumeFigures::step)};
  return f;
}

const JsonFields<InitFromFigures>& init_from_fields() {
  using I = InitFromFigures;
  static const JsonFields<I> f = {
      member("path", &I::path),       member("task", &I::task),
      member("step", &I::step),       member("loaded", &I::loaded),
      member("missing", &I::missing), member("unexpected", &I::unexpected)};
  return f;
}

const JsonFields<CudaGraphFigures>& cuda_graph_fields() {
  static const JsonFields<CudaGraphFigures> f = {
      member("captured_before_step", &CudaGraphFigures::captured_before_step),
      member("forward_ms", &CudaGraphFigures::forward_ms)};
  return f;
}

// ---------------------------------------------------------------------------------------------
// plan: the planned form, or {"predicted": null, "reason": ...}

const JsonFields<ReconciledComponent>& component_fields() {
  using C = ReconciledComponent;
  static const JsonFields<C> f = {member("predicted_bytes", &C::predicted_bytes),
                                  member("measured_bytes", &C::measured_bytes),
                                  member("ratio", &C::ratio), member("differs", &C::differs)};
  return f;
}

// The components by name (the names are open); a null one is kept as it is.
JsonField<MemoryReconciliation> plan_components_field() {
  using R = MemoryReconciliation;
  return converted<R>(
      "components", Presence::kOptional,
      [](const R& r) {
        Json components = Json::object();
        for (const ReconciledComponent& c : r.components) {
          components[c.name] = write_object(c, component_fields());
        }
        return components;
      },
      [](R& r, ObjectReader& o, DocContext& ctx, const std::string& key) {
        std::optional<ObjectReader> cs = o.object(key);
        if (!cs) return;
        for (const auto& item : cs->raw_object().items()) {
          if (item.value().is_null()) continue;  // kept as it is
          ReconciledComponent c =
              *read_section<ReconciledComponent>(*cs, item.key(), [&ctx](ObjectReader& i) {
                ReconciledComponent x;
                read_object(x, i, ctx, component_fields());
                return x;
              });
          c.name = item.key();
          r.components.push_back(c);
        }
        cs->keep_unknown();
      });
}

const JsonFields<PeakPhase>& peak_phase_fields() {
  static const JsonFields<PeakPhase> f = {member("predicted", &PeakPhase::predicted),
                                          member("predicted_module", &PeakPhase::predicted_module),
                                          null_if_empty("measured", &PeakPhase::measured)};
  return f;
}

const JsonFields<MemoryReconciliation>& planned_fields() {
  using R = MemoryReconciliation;
  static const JsonFields<R> f = {
      fixed<R>("schema_version", kSummaryPlanSchemaVersion),
      member("measured_source", &R::measured_source),
      member("measured_step", &R::measured_step),
      null_if_empty("reason", &R::reason),
      member("definition", &R::definition),
      plan_components_field(),
      object("peak_phase", &R::peak_phase, peak_phase_fields()),
      member("unmodelled_bytes", &R::unmodelled_bytes),
      member("unmodelled_note", &R::unmodelled_note),
      member("activations_per_block_bytes", &R::activations_per_block_bytes)};
  return f;
}

// predicted first: its presence tells this form from the planned one.
const JsonFields<MemoryReconciliation>& unplanned_fields() {
  using R = MemoryReconciliation;
  static const JsonFields<R> f = {fixed<R>("predicted", Json(nullptr)),
                                  member("reason", &R::unplanned_reason)};
  return f;
}

JsonField<RunContext> plan_field() {
  using R = MemoryReconciliation;
  return {"plan", Presence::kOptional,
          [](const RunContext& c) {
            if (!c.plan) return not_written();
            return write_object(
                *c.plan, c.plan->unplanned_reason.empty() ? planned_fields() : unplanned_fields());
          },
          [](RunContext& c, ObjectReader& o, DocContext& ctx, const std::string& key) {
            c.plan = read_section<R>(o, key, [&ctx](ObjectReader& p) {
              R r;
              const bool unplanned = p.raw(unplanned_fields().front().key) != nullptr;
              read_object(r, p, ctx, unplanned ? unplanned_fields() : planned_fields());
              return r;
            });
          },
          [] { return keys_of(planned_fields(), unplanned_fields()); }};
}

}  // namespace

const JsonFields<RunContext>& context_fields() {
  using C = RunContext;
  static const JsonFields<C> f = {
      data_field(),
      section_if_set("model", &C::model, model_figure_fields()),
      section_if_set("resumed_from", &C::resumed_from, resume_fields()),
      section_if_set("init_from", &C::init_from, init_from_fields()),
      section_if_set("cuda_graphs", &C::cuda_graphs, cuda_graph_fields()),
      plan_field()};
  return f;
}

}  // namespace llmprof::rundir::detail
