// eval.json's one writer and one reader (include/llmprof/rundir/eval_doc.h). schema_version and
// sets are the fields every file must have; fields this version does not know are kept.
#include "llmprof/rundir/eval_doc.h"

#include <fmt/format.h>

#include <cmath>

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
using detail::member;
using detail::ObjectReader;
using detail::Presence;

constexpr const char* kWholeSet = "the whole set, in order";

// A rate (or a loss) written as null, nothing timed, reads back as NaN, which writes null again.
detail::JsonField<EvalSetFigures> rate(std::string key, double EvalSetFigures::*m) {
  detail::JsonField<EvalSetFigures> f = member(key, m);
  f.read = [m](EvalSetFigures& r, ObjectReader& o, DocContext&, const std::string& key) {
    r.*m = o.number(key).value_or(NAN);
  };
  return f;
}

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
const detail::JsonFields<EvalSetFigures>& set_fields() {
  static const detail::JsonFields<EvalSetFigures> f = {
      member("name", &EvalSetFigures::name),
      member("source", &EvalSetFigures::source),
      member("batches", &EvalSetFigures::batches),
      member("sequences", &EvalSetFigures::sequences),
      member("targets", &EvalSetFigures::targets),
      member("available_sequences", &EvalSetFigures::available_sequences),
      detail::converted<EvalSetFigures>(
          "sampling", Presence::kOptional,
          [](const EvalSetFigures& r) {
            return Json(r.sampling.empty() ? std::string(kWholeSet) : r.sampling);
          },
          [](EvalSetFigures& r, ObjectReader& o, DocContext&, const std::string& key) {
            r.sampling = o.text(key).value_or("");
          }),
      rate("loss", &EvalSetFigures::loss),
      member("perplexity", &EvalSetFigures::perplexity),
      member("accuracy", &EvalSetFigures::accuracy),
      rate("seconds", &EvalSetFigures::seconds),
      rate("samples_per_s", &EvalSetFigures::samples_per_s),
      rate("tokens_per_s", &EvalSetFigures::tokens_per_s)};
  return f;
}

}  // namespace

namespace detail {
namespace {
// The sets: required, and an array (null is not).
JsonField<EvalDoc> sets_field() {
  JsonField<EvalDoc> f = list("sets", &EvalDoc::sets, set_fields(), Presence::kRequired);
  f.read = [](EvalDoc& d, ObjectReader& o, DocContext& ctx, const std::string& key) {
    if (!o.raw(key)->is_array()) o.fail(key, "an array of objects");
    d.sets = read_object_list<EvalSetFigures>(o, ctx, key, set_fields());
  };
  return f;
}
}  // namespace

const JsonFields<DocTokenizer>& tokenizer_fields() {
  static const JsonFields<DocTokenizer> f = {member("type", &DocTokenizer::type),
                                             member("vocab_size", &DocTokenizer::vocab_size),
                                             member("sha256", &DocTokenizer::sha256)};
  return f;
}

const JsonFields<EvalDoc>& eval_doc_fields() {
  static const JsonFields<EvalDoc> f = {
      name_member("task", &EvalDoc::task),
      member("model", &EvalDoc::model),
      member("parameters", &EvalDoc::parameters),
      member("checkpoint", &EvalDoc::checkpoint),
      member("checkpoint_note", &EvalDoc::checkpoint_note),
      member("weights", &EvalDoc::weights),
      member("init_tensors", &EvalDoc::init_tensors),
      member("weights_note", &EvalDoc::weights_note),
      member("model_from_checkpoint", &EvalDoc::model_from_checkpoint),
      object("tokenizer", &EvalDoc::tokenizer, tokenizer_fields()),
      member("config_notes", &EvalDoc::config_notes),
      name_member("precision", &EvalDoc::precision),
      member("threads", &EvalDoc::threads),
      member("batch_size", &EvalDoc::batch_size),
      member("perplexity_note", &EvalDoc::perplexity_note),
      member("command_line", &EvalDoc::command_line),
      sets_field()};
  return f;
}
}  // namespace detail

std::string eval_doc_text(const EvalDoc& d) {
  return detail::write_doc(d, kEvalSchemaVersion, detail::eval_doc_fields()).dump(2) + "\n";
}

void write_eval_doc(const std::string& path, const EvalDoc& d) {
  output::write_file_atomic(path, eval_doc_text(d));
}

EvalDoc parse_eval_doc(const std::string& text, const std::string& file) {
  return detail::read_doc<EvalDoc>(text, file, kEvalSchemaVersion, detail::eval_doc_fields());
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
