// tune.json's one writer and one reader (include/llmprof/rundir/tune_doc.h). schema_version,
// inputs and candidates are the fields every file has; unknown fields are kept.
#include "llmprof/rundir/tune_doc.h"

#include <fmt/format.h>

#include "doc_tables.h"
#include "json_fields.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "read_util.h"

namespace llmprof::rundir {

bool TuneInputs::operator==(const TuneInputs& o) const {
  return config_path == o.config_path && config_text == o.config_text && sets == o.sets &&
         space == o.space && objective == o.objective && figure == o.figure && steps == o.steps &&
         keep_numerics == o.keep_numerics && loss_tolerance == o.loss_tolerance &&
         device == o.device && nproc == o.nproc;
}

namespace {

using detail::Json;
using detail::list;
using detail::member;
using detail::ObjectReader;
using detail::Presence;

constexpr const char* kTuneWhat =
    "llmprof tune: candidates raced against the starting config by interleaved A/B repetitions "
    "of short trainings (successive halving), the planner's verdict beside each";

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
const detail::JsonFields<TuneInputs>& inputs_fields() {
  static const detail::JsonFields<TuneInputs> f = {
      member("config_path", &TuneInputs::config_path),
      member("config_text", &TuneInputs::config_text),
      member("sets", &TuneInputs::sets),
      member("space", &TuneInputs::space),
      member("objective", &TuneInputs::objective),
      member("figure", &TuneInputs::figure),
      member("steps", &TuneInputs::steps),
      member("keep_numerics", &TuneInputs::keep_numerics),
      member("loss_tolerance", &TuneInputs::loss_tolerance),
      member("device", &TuneInputs::device),
      member("nproc", &TuneInputs::nproc)};
  return f;
}

const detail::JsonFields<TuneKnob>& knob_fields() {
  static const detail::JsonFields<TuneKnob> f = {
      member("key", &TuneKnob::key), member("values", &TuneKnob::values),
      member("numerics", &TuneKnob::numerics),
      member("predicted_ratio", &TuneKnob::predicted_ratio),
      member("prediction_source", &TuneKnob::prediction_source)};
  return f;
}

const detail::JsonFields<TuneRepetition>& repetition_fields() {
  static const detail::JsonFields<TuneRepetition> f = {
      member("arm", &TuneRepetition::arm, Presence::kRequired),
      member("round", &TuneRepetition::round, Presence::kRequired),
      member("figure", &TuneRepetition::figure, Presence::kRequired),
      member("loss", &TuneRepetition::loss),
      member("seconds", &TuneRepetition::seconds, Presence::kRequired),
      member("log", &TuneRepetition::log),
      member("ranks", &TuneRepetition::ranks)};
  return f;
}

const detail::JsonFields<TuneCandidate>& candidate_fields() {
  static const detail::JsonFields<TuneCandidate> f = {
      member("id", &TuneCandidate::id, Presence::kRequired),
      member("sets", &TuneCandidate::sets, Presence::kRequired),
      member("numerics", &TuneCandidate::numerics),
      member("predicted_ratio", &TuneCandidate::predicted_ratio),
      member("prediction_source", &TuneCandidate::prediction_source),
      member("planned_peak_bytes", &TuneCandidate::planned_peak_bytes),
      member("planned_fits", &TuneCandidate::planned_fits),
      member("plan_note", &TuneCandidate::plan_note),
      member("outcome", &TuneCandidate::outcome, Presence::kRequired),
      member("reason", &TuneCandidate::reason),
      list("repetitions", &TuneCandidate::repetitions, repetition_fields(), Presence::kRequired),
      member("rounds", &TuneCandidate::rounds),
      member("baseline_median", &TuneCandidate::baseline_median),
      member("candidate_median", &TuneCandidate::candidate_median),
      member("ratio", &TuneCandidate::ratio),
      member("ci_low", &TuneCandidate::ci_low),
      member("ci_high", &TuneCandidate::ci_high),
      detail::null_if_empty("verdict", &TuneCandidate::verdict),
      member("loss_difference", &TuneCandidate::loss_difference),
      member("loss_within_tolerance", &TuneCandidate::loss_within_tolerance),
      member("seconds", &TuneCandidate::seconds)};
  return f;
}

}  // namespace

namespace detail {
const JsonFields<TuneDoc>& tune_doc_fields() {
  static const JsonFields<TuneDoc> f = {
      // A constant description, written again: read only to check it is text.
      converted<TuneDoc>(
          "what", Presence::kOptional, [](const TuneDoc&) { return Json(kTuneWhat); },
          [](TuneDoc&, ObjectReader& o, DocContext&, const std::string& key) { o.text(key); }),
      object("inputs", &TuneDoc::inputs, inputs_fields(), Presence::kRequired),
      member("budget_s", &TuneDoc::budget_s),
      list("knobs", &TuneDoc::knobs, knob_fields()),
      list("candidates", &TuneDoc::candidates, candidate_fields(), Presence::kRequired),
      member("status", &TuneDoc::status),
      member("winner", &TuneDoc::winner),
      member("conclusion", &TuneDoc::conclusion),
      member("planner_check", &TuneDoc::planner_check),
      member("seconds_spent", &TuneDoc::seconds_spent),
      member("notes", &TuneDoc::notes)};
  return f;
}
}  // namespace detail

std::string tune_doc_text(const TuneDoc& d) {
  return detail::write_doc(d, kTuneSchemaVersion, detail::tune_doc_fields()).dump(2) + "\n";
}

void write_tune_doc(const std::string& path, const TuneDoc& d) {
  output::write_file_atomic(path, tune_doc_text(d));
}

TuneDoc parse_tune_doc(const std::string& text, const std::string& file) {
  return detail::read_doc<TuneDoc>(text, file, kTuneSchemaVersion, detail::tune_doc_fields());
}

TuneDoc read_tune_doc(const std::string& path) {
  return parse_tune_doc(detail::read_text(path), path);
}

std::string tune_doc_fields_doc() {
  TuneDoc d;
  d.inputs.sets = d.inputs.space = {"key=value"};
  d.knobs.push_back({"key", {"key=value"}, "kept", 1.5, "source"});
  TuneCandidate c;
  c.sets = {"key=value"};
  c.predicted_ratio = c.baseline_median = c.candidate_median = c.ratio = c.ci_low = c.ci_high =
      c.loss_difference = 1.5;
  c.planned_peak_bytes = 2;
  c.planned_fits = c.loss_within_tolerance = true;
  c.verdict = "faster";
  c.repetitions.push_back({"baseline", 0, 1.5, 1.5, 1.5, "log", 2});
  d.candidates.push_back(c);
  d.winner = 1;
  d.notes = {"note"};
  const std::string heading = fmt::format(
      "# tune.json fields (schema_version {})\n\n"
      "Written into a tune directory by `llmprof tune`, after every repetition (temp + rename): "
      "a search stopped by Ctrl-C or a kill resumes from it, the same command and `--out`, "
      "without measuring anything twice. Generated from `rundir::TuneDoc` "
      "(include/llmprof/rundir/tune_doc.h) through its writer; `tests/rundir/tune_doc_test.cpp` "
      "checks that this file matches. Keys are written in this (sorted) order. Each candidate's "
      "`ratio` is its figure over the starting config's (a time, or energy per token: below 1 "
      "is better), from the repetitions of its interleaved A/B, `ci_low`/`ci_high` the engine's "
      "interval (null without one); `loss_difference` is loss@`inputs.steps` of the candidate "
      "over the start's, minus 1 (same seed). `outcome`: pending, measured, dropped (`reason` says "
      "by which rule), "
      "winner, does_not_fit (planned, never run), out_of_memory, failed, unmeasured. `winner` is "
      "a candidate's `id`, null when the starting config stays. Read: `schema_version`, "
      "`inputs`, `candidates` and each candidate's `id`, `sets`, `outcome` and `repetitions` "
      "are required.\n\n",
      kTuneSchemaVersion);
  const Json none = Json::parse(tune_doc_text(TuneDoc{}));
  return detail::field_table_page(heading, Json::parse(tune_doc_text(d)), none);
}

}  // namespace llmprof::rundir
