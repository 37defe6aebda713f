// bench.json's one writer and one reader (include/llmprof/rundir/bench_doc.h). schema_version
// and rows are the fields every file must have; fields this version does not know are kept.
#include "llmprof/rundir/bench_doc.h"

#include <fmt/format.h>

#include "doc_lists.h"
#include "json_doc.h"
#include "read_util.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::ObjectReader;
using detail::object_list;
using detail::opt;
using detail::value_list;

Json row_json(const BenchRow& r) {
  const LatencyStats& l = r.latency;
  return {{"variant", config::name(r.variant)},
          {"batch", r.batch},
          {"seq_len", r.seq_len},
          {"samples_per_s", r.samples_per_s},
          {"tokens_per_s", r.tokens_per_s},
          {"latency",
           {{"n", l.n}, {"mean_ms", l.mean_ms}, {"p50_ms", l.p50_ms}, {"p90_ms", l.p90_ms},
            {"p95_ms", l.p95_ms}, {"p99_ms", l.p99_ms}, {"max_ms", l.max_ms}}},
          {"loss", opt(r.loss)},
          {"perplexity", opt(r.perplexity)},
          {"accuracy", opt(r.accuracy)},
          {"weight_bytes", r.weight_bytes},
          {"ttft_ms", opt(r.ttft_ms)},
          {"per_token_p50_ms", opt(r.per_token_p50_ms)},
          {"generate_tokens_per_s", opt(r.generate_tokens_per_s)}};
}

Json quality_json(const QualityRow& q) {
  return {{"variant", config::name(q.variant)}, {"dataset", q.dataset},
          {"source", q.source},                 {"loss", opt(q.loss)},
          {"perplexity", opt(q.perplexity)},    {"accuracy", opt(q.accuracy)},
          {"samples_per_s", opt(q.samples_per_s)}, {"tokens_per_s", opt(q.tokens_per_s)},
          {"seconds", q.seconds},               {"weights", q.weights}};
}

config::BenchVariant variant_of(ObjectReader& o) {
  return parse_name<config::BenchVariant>(o.text("variant").value_or(""), o.file(),
                                          o.field("variant"));
}

BenchRow read_row(ObjectReader& o) {
  BenchRow r;
  r.variant = variant_of(o);
  r.batch = o.integer("batch").value_or(0);
  r.seq_len = o.integer("seq_len").value_or(0);
  r.samples_per_s = o.number("samples_per_s").value_or(0);
  r.tokens_per_s = o.number("tokens_per_s").value_or(0);
  if (std::optional<ObjectReader> l = o.object("latency")) {
    r.latency = LatencyStats{l->integer("n").value_or(0),       l->number("mean_ms").value_or(0),
                             l->number("p50_ms").value_or(0),   l->number("p90_ms").value_or(0),
                             l->number("p95_ms").value_or(0),   l->number("p99_ms").value_or(0),
                             l->number("max_ms").value_or(0)};
    l->keep_unknown();
  }
  r.loss = o.number("loss");
  r.perplexity = o.number("perplexity");
  r.accuracy = o.number("accuracy");
  r.weight_bytes = o.integer("weight_bytes").value_or(0);
  r.ttft_ms = o.number("ttft_ms");
  r.per_token_p50_ms = o.number("per_token_p50_ms");
  r.generate_tokens_per_s = o.number("generate_tokens_per_s");
  return r;
}

QualityRow read_quality(ObjectReader& o) {
  QualityRow q;
  q.variant = variant_of(o);
  q.dataset = o.text("dataset").value_or("");
  q.source = o.text("source").value_or("");
  q.loss = o.number("loss");
  q.perplexity = o.number("perplexity");
  q.accuracy = o.number("accuracy");
  q.samples_per_s = o.number("samples_per_s");
  q.tokens_per_s = o.number("tokens_per_s");
  q.seconds = o.number("seconds").value_or(0);
  q.weights = o.text("weights").value_or("");
  return q;
}

void read_setting(ObjectReader& doc, BenchDoc& d) {
  d.task = doc.text("task").value_or("");
  d.model = doc.text("model").value_or("");
  d.parameters = doc.integer("parameters").value_or(0);
  d.checkpoint = doc.text("checkpoint");
  d.checkpoint_note = doc.text("checkpoint_note").value_or("");
  d.weights = doc.text("weights").value_or("");
  d.init_tensors = value_list<std::string>(doc, "init_tensors");
  d.model_from_checkpoint = value_list<std::string>(doc, "model_from_checkpoint");
  if (std::optional<ObjectReader> t = doc.object("tokenizer")) {
    d.tokenizer = DocTokenizer{t->text("type").value_or(""), t->integer("vocab_size").value_or(0),
                               t->text("sha256")};
    t->keep_unknown();
  }
  d.threads = doc.integer("threads").value_or(0);
  d.quant_engine = doc.text("quant_engine").value_or("");
  d.torch_version = doc.text("torch_version").value_or("");
  for (const std::string& v : value_list<std::string>(doc, "variants")) {
    d.variants.push_back(parse_name<config::BenchVariant>(v, doc.file(), "variants"));
  }
  d.batch_sizes = value_list<int64_t>(doc, "batch_sizes");
  d.warmup_iters = doc.integer("warmup_iters").value_or(0);
  d.iters = doc.integer("iters").value_or(0);
  d.quality_batch_size = doc.integer("quality_batch_size").value_or(0);
}

}  // namespace

std::string bench_doc_text(const BenchDoc& d) {
  Json rows = Json::array(), quality = Json::array(), variants = Json::array();
  for (const BenchRow& r : d.rows) rows.push_back(row_json(r));
  for (const QualityRow& q : d.quality) quality.push_back(quality_json(q));
  for (const config::BenchVariant v : d.variants) variants.push_back(config::name(v));
  Json generation = nullptr;
  if (const auto& g = d.generation) {
    generation = {{"prompt_tokens", g->prompt_tokens},
                  {"generate_tokens", g->generate_tokens},
                  {"kv_cache_bytes_per_token", g->kv_cache_bytes_per_token},
                  {"mha_kv_cache_bytes_per_token", g->mha_kv_cache_bytes_per_token},
                  {"kv_cache_note", g->kv_cache_note}};
  }
  Json j = {{"schema_version", kBenchSchemaVersion}, {"task", d.task}, {"model", d.model},
            {"parameters", d.parameters}, {"checkpoint", opt(d.checkpoint)},
            {"tokenizer", {{"type", d.tokenizer.type}, {"vocab_size", d.tokenizer.vocab_size},
                           {"sha256", opt(d.tokenizer.sha256)}}},
            {"checkpoint_note", d.checkpoint_note}, {"weights", d.weights},
            {"init_tensors", d.init_tensors}, {"model_from_checkpoint", d.model_from_checkpoint},
            {"threads", d.threads}, {"quant_engine", d.quant_engine},
            {"torch_version", d.torch_version}, {"variants", std::move(variants)},
            {"batch_sizes", d.batch_sizes}, {"warmup_iters", d.warmup_iters},
            {"iters", d.iters}, {"quality_batch_size", d.quality_batch_size},
            {"generation", std::move(generation)}, {"generation_note", opt(d.generation_note)},
            {"notes", d.notes}, {"context", detail::env_body_json(d.context)},
            {"rows", std::move(rows)}, {"quality", std::move(quality)}};
  detail::put_unknown(j, d.unknown);
  return j.dump(2) + "\n";
}

void write_bench_doc(const std::string& path, const BenchDoc& d) {
  output::write_file_atomic(path, bench_doc_text(d));
}

BenchDoc parse_bench_doc(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  BenchDoc d;
  detail::DocContext ctx{file, &d.unknown, nullptr};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kBenchSchemaVersion);
  read_setting(doc, d);
  if (std::optional<ObjectReader> g = doc.object("generation")) {
    d.generation = GenerationFigures{
        g->integer("prompt_tokens").value_or(0), g->integer("generate_tokens").value_or(0),
        g->integer("kv_cache_bytes_per_token").value_or(0),
        g->integer("mha_kv_cache_bytes_per_token").value_or(0),
        g->text("kv_cache_note").value_or("")};
    g->keep_unknown();
  }
  d.generation_note = doc.text("generation_note");
  if (std::optional<ObjectReader> n = doc.object("notes")) {
    for (const auto& [key, value] : n->raw_object().items()) {
      d.notes[key] = n->text(key).value_or("");
    }
  }
  if (std::optional<ObjectReader> c = doc.object("context")) {
    detail::read_env_body(*c, ctx, d.context);
    c->keep_unknown();
  }
  doc.require("rows");
  d.rows = object_list<BenchRow>(doc, ctx, "rows", read_row);
  d.quality = object_list<QualityRow>(doc, ctx, "quality", read_quality);
  doc.keep_unknown();
  return d;
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
