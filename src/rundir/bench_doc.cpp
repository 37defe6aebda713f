// bench.json's one writer and one reader (include/llmprof/rundir/bench_doc.h). schema_version
// and rows are the fields every file must have; fields this version does not know are kept.
#include "llmprof/rundir/bench_doc.h"

#include <fmt/format.h>

#include "doc_tables.h"
#include "json_fields.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::JsonField;
using detail::JsonFields;
using detail::member;
using detail::ObjectReader;
using detail::Presence;

// A row's variant: its name; read even when absent (no variant is an error naming the field).
template <typename Row>
JsonField<Row> variant_field() {
  return detail::converted<Row>(
      "variant", Presence::kOptional, [](const Row& r) { return Json(config::name(r.variant)); },
      [](Row& r, ObjectReader& o, DocContext&, const std::string& key) {
        r.variant =
            parse_name<config::BenchVariant>(o.text(key).value_or(""), o.file(), o.field(key));
      });
}

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
const JsonFields<LatencyStats>& latency_fields() {
  static const JsonFields<LatencyStats> f = {
      member("n", &LatencyStats::n),           member("mean_ms", &LatencyStats::mean_ms),
      member("p50_ms", &LatencyStats::p50_ms), member("p90_ms", &LatencyStats::p90_ms),
      member("p95_ms", &LatencyStats::p95_ms), member("p99_ms", &LatencyStats::p99_ms),
      member("max_ms", &LatencyStats::max_ms)};
  return f;
}

const JsonFields<BenchRow>& row_fields() {
  static const JsonFields<BenchRow> f = {
      variant_field<BenchRow>(),
      member("batch", &BenchRow::batch),
      member("seq_len", &BenchRow::seq_len),
      member("samples_per_s", &BenchRow::samples_per_s),
      member("tokens_per_s", &BenchRow::tokens_per_s),
      detail::object("latency", &BenchRow::latency, latency_fields()),
      member("loss", &BenchRow::loss),
      member("perplexity", &BenchRow::perplexity),
      member("accuracy", &BenchRow::accuracy),
      member("weight_bytes", &BenchRow::weight_bytes),
      member("ttft_ms", &BenchRow::ttft_ms),
      member("per_token_p50_ms", &BenchRow::per_token_p50_ms),
      member("generate_tokens_per_s", &BenchRow::generate_tokens_per_s)};
  return f;
}

const JsonFields<QualityRow>& quality_fields() {
  static const JsonFields<QualityRow> f = {variant_field<QualityRow>(),
                                           member("dataset", &QualityRow::dataset),
                                           member("source", &QualityRow::source),
                                           member("loss", &QualityRow::loss),
                                           member("perplexity", &QualityRow::perplexity),
                                           member("accuracy", &QualityRow::accuracy),
                                           member("samples_per_s", &QualityRow::samples_per_s),
                                           member("tokens_per_s", &QualityRow::tokens_per_s),
                                           member("seconds", &QualityRow::seconds),
                                           member("weights", &QualityRow::weights)};
  return f;
}

const JsonFields<GenerationFigures>& generation_fields() {
  using G = GenerationFigures;
  static const JsonFields<G> f = {
      member("prompt_tokens", &G::prompt_tokens), member("generate_tokens", &G::generate_tokens),
      member("kv_cache_bytes_per_token", &G::kv_cache_bytes_per_token),
      member("mha_kv_cache_bytes_per_token", &G::mha_kv_cache_bytes_per_token),
      member("kv_cache_note", &G::kv_cache_note)};
  return f;
}

// The variants measured, by name.
JsonField<BenchDoc> variants_field() {
  return detail::converted<BenchDoc>(
      "variants", Presence::kOptional,
      [](const BenchDoc& d) {
        Json variants = Json::array();
        for (const config::BenchVariant v : d.variants) variants.push_back(config::name(v));
        return variants;
      },
      [](BenchDoc& d, ObjectReader& doc, DocContext&, const std::string& key) {
        for (const std::string& v : detail::value_list<std::string>(doc, key)) {
          d.variants.push_back(parse_name<config::BenchVariant>(v, doc.file(), key));
        }
      });
}

// Variant or figure -> how it is measured: a key per note.
JsonField<BenchDoc> notes_field() {
  return detail::converted<BenchDoc>(
      "notes", Presence::kOptional, [](const BenchDoc& d) { return Json(d.notes); },
      [](BenchDoc& d, ObjectReader& doc, DocContext&, const std::string& key) {
        if (std::optional<ObjectReader> n = doc.object(key)) {
          for (const auto& [key, value] : n->raw_object().items()) {
            d.notes[key] = n->text(key).value_or("");
          }
        }
      });
}

// env.json's fields but schema_version (its own reader and writer).
JsonField<BenchDoc> context_field() {
  return detail::converted<BenchDoc>(
      "context", Presence::kOptional,
      [](const BenchDoc& d) { return detail::env_body_json(d.context); },
      [](BenchDoc& d, ObjectReader& doc, DocContext& ctx, const std::string& key) {
        if (std::optional<ObjectReader> c = doc.object(key)) {
          detail::read_env_body(*c, ctx, d.context);
          c->keep_unknown();
        }
      });
}

}  // namespace

namespace detail {
const JsonFields<BenchDoc>& bench_doc_fields() {
  static const JsonFields<BenchDoc> f = {
      member("task", &BenchDoc::task),
      member("model", &BenchDoc::model),
      member("parameters", &BenchDoc::parameters),
      member("checkpoint", &BenchDoc::checkpoint),
      member("checkpoint_note", &BenchDoc::checkpoint_note),
      member("weights", &BenchDoc::weights),
      member("init_tensors", &BenchDoc::init_tensors),
      member("model_from_checkpoint", &BenchDoc::model_from_checkpoint),
      object("tokenizer", &BenchDoc::tokenizer, tokenizer_fields()),
      member("threads", &BenchDoc::threads),
      member("quant_engine", &BenchDoc::quant_engine),
      member("torch_version", &BenchDoc::torch_version),
      variants_field(),
      member("batch_sizes", &BenchDoc::batch_sizes),
      member("warmup_iters", &BenchDoc::warmup_iters),
      member("iters", &BenchDoc::iters),
      member("quality_batch_size", &BenchDoc::quality_batch_size),
      section("generation", &BenchDoc::generation, generation_fields()),
      member("generation_note", &BenchDoc::generation_note),
      notes_field(),
      context_field(),
      list("rows", &BenchDoc::rows, row_fields(), Presence::kRequired),
      list("quality", &BenchDoc::quality, quality_fields())};
  return f;
}
}  // namespace detail

std::string bench_doc_text(const BenchDoc& d) {
  return detail::write_doc(d, kBenchSchemaVersion, detail::bench_doc_fields()).dump(2) + "\n";
}

void write_bench_doc(const std::string& path, const BenchDoc& d) {
  output::write_file_atomic(path, bench_doc_text(d));
}

BenchDoc parse_bench_doc(const std::string& text, const std::string& file) {
  return detail::read_doc<BenchDoc>(text, file, kBenchSchemaVersion, detail::bench_doc_fields());
}

std::string bench_doc_fields_doc() {
  BenchDoc d;
  d.checkpoint = d.tokenizer.sha256 = "text";
  d.generation = GenerationFigures{};
  d.notes["<variant or figure>"] = "text";
  d.rows.push_back(BenchRow{});
  d.rows[0].loss = d.rows[0].perplexity = d.rows[0].accuracy = d.rows[0].ttft_ms =
      d.rows[0].per_token_p50_ms = d.rows[0].generate_tokens_per_s = 1.5;
  d.quality.push_back(QualityRow{});
  d.quality[0].loss = d.quality[0].perplexity = d.quality[0].accuracy =
      d.quality[0].samples_per_s = d.quality[0].tokens_per_s = 1.5;
  const std::string heading = fmt::format(
      "# bench.json fields (schema_version {})\n\n"
      "Generated from `rundir::BenchDoc` (include/llmprof/rundir/bench_doc.h) through its "
      "writer; `tests/rundir/bench_doc_test.cpp` checks that this file matches. Keys are written "
      "in this (sorted) order; `context` holds env.json's fields (docs/env.md) but "
      "`schema_version`, `peak_flops` and `energy`. Read: `schema_version` and `rows` are "
      "required.\n\n",
      kBenchSchemaVersion);
  const Json none = Json::parse(bench_doc_text(BenchDoc{}));
  Json full = Json::parse(bench_doc_text(d));
  full["context"] = Json::object();  // listed in docs/env.md
  return detail::field_table_page(heading, full, none);
}

}  // namespace llmprof::rundir
