// eval.json's one writer and one reader (include/llmprof/rundir/eval_doc.h). schema_version and
// sets are the fields every file must have; fields this version does not know are kept.
#include "llmprof/rundir/eval_doc.h"

#include <fmt/format.h>

#include <cmath>

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
using detail::string_list;
using detail::opt;

constexpr const char* kWholeSet = "the whole set, in order";

Json set_json(const EvalSetFigures& r) {
  return {{"name", r.name},
          {"source", r.source},
          {"batches", r.batches},
          {"sequences", r.sequences},
          {"targets", r.targets},
          {"available_sequences", r.available_sequences},
          {"sampling", r.sampling.empty() ? std::string(kWholeSet) : r.sampling},
          {"loss", r.loss},
          {"perplexity", opt(r.perplexity)},
          {"accuracy", opt(r.accuracy)},
          {"seconds", r.seconds},
          {"samples_per_s", r.samples_per_s},
          {"tokens_per_s", r.tokens_per_s}};
}

// A rate written as null (nothing timed) reads back as NaN, which writes null again.
double rate(ObjectReader& o, const std::string& key) { return o.number(key).value_or(NAN); }

EvalSetFigures read_set(ObjectReader& o) {
  EvalSetFigures r;
  r.name = o.text("name").value_or("");
  r.source = o.text("source").value_or("");
  r.batches = o.integer("batches").value_or(0);
  r.sequences = o.integer("sequences").value_or(0);
  r.targets = o.integer("targets").value_or(0);
  r.available_sequences = o.integer("available_sequences").value_or(0);
  r.sampling = o.text("sampling").value_or("");
  r.loss = rate(o, "loss");
  r.perplexity = o.number("perplexity");
  r.accuracy = o.number("accuracy");
  r.seconds = rate(o, "seconds");
  r.samples_per_s = rate(o, "samples_per_s");
  r.tokens_per_s = rate(o, "tokens_per_s");
  return r;
}

std::vector<EvalSetFigures> read_sets(ObjectReader& doc, detail::DocContext& ctx) {
  doc.require("sets");
  if (!doc.raw("sets")->is_array()) doc.fail("sets", "an array of objects");
  return detail::object_list<EvalSetFigures>(doc, ctx, "sets", read_set);
}

template <typename E>
E name_or(ObjectReader& doc, const std::string& key, E fallback) {
  const std::optional<std::string> v = doc.text(key);
  return v ? parse_name<E>(*v, doc.file(), key) : fallback;
}

}  // namespace

std::string eval_doc_text(const EvalDoc& d) {
  Json sets = Json::array();
  for (const EvalSetFigures& s : d.sets) sets.push_back(set_json(s));
  Json j = {{"schema_version", kEvalSchemaVersion},
            {"task", config::name(d.task)},
            {"model", d.model},
            {"parameters", d.parameters},
            {"checkpoint", opt(d.checkpoint)},
            {"checkpoint_note", d.checkpoint_note},
            {"weights", d.weights},
            {"init_tensors", d.init_tensors},
            {"weights_note", opt(d.weights_note)},
            {"model_from_checkpoint", d.model_from_checkpoint},
            {"tokenizer", {{"type", d.tokenizer.type}, {"vocab_size", d.tokenizer.vocab_size},
                           {"sha256", opt(d.tokenizer.sha256)}}},
            {"config_notes", d.config_notes},
            {"precision", config::name(d.precision)},
            {"threads", d.threads},
            {"batch_size", d.batch_size},
            {"perplexity_note", d.perplexity_note},
            {"command_line", d.command_line},
            {"sets", std::move(sets)}};
  detail::put_unknown(j, d.unknown);
  return j.dump(2) + "\n";
}

void write_eval_doc(const std::string& path, const EvalDoc& d) {
  output::write_file_atomic(path, eval_doc_text(d));
}

EvalDoc parse_eval_doc(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  EvalDoc d;
  detail::DocContext ctx{file, &d.unknown, nullptr};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kEvalSchemaVersion);
  d.task = name_or(doc, "task", config::TaskKind::kLm);
  d.model = doc.text("model").value_or("");
  d.parameters = doc.integer("parameters").value_or(0);
  d.checkpoint = doc.text("checkpoint");
  d.checkpoint_note = doc.text("checkpoint_note").value_or("");
  d.weights = doc.text("weights").value_or("");
  d.init_tensors = string_list(doc, "init_tensors");
  d.weights_note = doc.text("weights_note");
  d.model_from_checkpoint = string_list(doc, "model_from_checkpoint");
  if (std::optional<ObjectReader> t = doc.object("tokenizer")) {
    d.tokenizer = DocTokenizer{t->text("type").value_or(""), t->integer("vocab_size").value_or(0),
                               t->text("sha256")};
    t->keep_unknown();
  }
  d.config_notes = string_list(doc, "config_notes");
  d.precision = name_or(doc, "precision", config::Precision::kFp32);
  d.threads = doc.integer("threads").value_or(0);
  d.batch_size = doc.integer("batch_size").value_or(0);
  d.perplexity_note = doc.text("perplexity_note").value_or("");
  d.command_line = string_list(doc, "command_line");
  d.sets = read_sets(doc, ctx);
  doc.keep_unknown();
  return d;
}

EvalDoc read_eval_doc(const std::string& path) {
  return parse_eval_doc(detail::read_text(path), path);
}

std::string eval_doc_fields_doc() {
  EvalDoc d;
  d.checkpoint = d.weights_note = d.tokenizer.sha256 = "text";
  d.sets.push_back(EvalSetFigures{});
  d.sets[0].perplexity = d.sets[0].accuracy = 1.5;
  const std::string heading = fmt::format(
      "# eval.json fields (schema_version {})\n\n"
      "Generated from `rundir::EvalDoc` (include/llmprof/rundir/eval_doc.h) through its writer; "
      "`tests/rundir/eval_doc_test.cpp` checks that this file matches. Keys are written in this "
      "(sorted) order; every key is always written, null where the figure does not apply "
      "(`checkpoint` for initial weights, `perplexity` for classify, `accuracy` for lm and mlm). "
      "Read: `schema_version` and `sets` are required.\n\n",
      kEvalSchemaVersion);
  const Json none = Json::parse(eval_doc_text(EvalDoc{}));
  return detail::field_table_page(heading, Json::parse(eval_doc_text(d)), none);
}

}  // namespace llmprof::rundir
