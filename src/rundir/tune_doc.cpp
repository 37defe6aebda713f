// tune.json's one writer and one reader (include/llmprof/rundir/tune_doc.h). schema_version,
// inputs and candidates are the fields every file has; unknown fields are kept.
#include "llmprof/rundir/tune_doc.h"

#include <fmt/format.h>

#include "doc_lists.h"
#include "json_doc.h"
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
using detail::object_list;
using detail::ObjectReader;
using detail::opt;
using detail::value_list;

constexpr const char* kTuneWhat =
    "llmprof tune: candidates raced against the starting config by interleaved A/B repetitions "
    "of short trainings (successive halving), the planner's verdict beside each";

Json inputs_json(const TuneInputs& i) {
  return {{"config_path", i.config_path},
          {"config_text", i.config_text},
          {"sets", i.sets},
          {"space", i.space},
          {"objective", i.objective},
          {"figure", i.figure},
          {"steps", i.steps},
          {"keep_numerics", i.keep_numerics},
          {"loss_tolerance", i.loss_tolerance},
          {"device", i.device},
          {"nproc", i.nproc}};
}

Json knob_json(const TuneKnob& k) {
  return {{"key", k.key},
          {"values", k.values},
          {"numerics", k.numerics},
          {"predicted_ratio", opt(k.predicted_ratio)},
          {"prediction_source", k.prediction_source}};
}

Json repetition_json(const TuneRepetition& r) {
  return {{"arm", r.arm},         {"round", r.round}, {"figure", r.figure},   {"loss", opt(r.loss)},
          {"seconds", r.seconds}, {"log", r.log},     {"ranks", opt(r.ranks)}};
}

Json candidate_json(const TuneCandidate& c) {
  Json reps = Json::array();
  for (const TuneRepetition& r : c.repetitions) reps.push_back(repetition_json(r));
  return {{"id", c.id},
          {"sets", c.sets},
          {"numerics", c.numerics},
          {"predicted_ratio", opt(c.predicted_ratio)},
          {"prediction_source", c.prediction_source},
          {"planned_peak_bytes", opt(c.planned_peak_bytes)},
          {"planned_fits", opt(c.planned_fits)},
          {"plan_note", c.plan_note},
          {"outcome", c.outcome},
          {"reason", c.reason},
          {"repetitions", std::move(reps)},
          {"rounds", c.rounds},
          {"baseline_median", opt(c.baseline_median)},
          {"candidate_median", opt(c.candidate_median)},
          {"ratio", opt(c.ratio)},
          {"ci_low", opt(c.ci_low)},
          {"ci_high", opt(c.ci_high)},
          {"verdict", detail::text_or_null(c.verdict)},
          {"loss_difference", opt(c.loss_difference)},
          {"loss_within_tolerance", opt(c.loss_within_tolerance)},
          {"seconds", c.seconds}};
}

TuneInputs read_inputs(ObjectReader& o) {
  TuneInputs i;
  i.config_path = o.text("config_path").value_or("");
  i.config_text = o.text("config_text").value_or("");
  i.sets = value_list<std::string>(o, "sets");
  i.space = value_list<std::string>(o, "space");
  i.objective = o.text("objective").value_or("");
  i.figure = o.text("figure").value_or("");
  i.steps = o.integer("steps").value_or(0);
  i.keep_numerics = o.boolean("keep_numerics").value_or(false);
  i.loss_tolerance = o.number("loss_tolerance").value_or(0);
  i.device = o.text("device").value_or("");
  i.nproc = o.integer("nproc").value_or(1);
  return i;
}

TuneKnob read_knob(ObjectReader& o) {
  TuneKnob k;
  k.key = o.text("key").value_or("");
  k.values = value_list<std::string>(o, "values");
  k.numerics = o.text("numerics").value_or("");
  k.predicted_ratio = o.number("predicted_ratio");
  k.prediction_source = o.text("prediction_source").value_or("");
  return k;
}

TuneRepetition read_repetition(ObjectReader& o) {
  for (const char* key : {"arm", "round", "figure", "seconds"}) o.require(key);
  TuneRepetition r;
  r.arm = o.text("arm").value_or("");
  r.round = o.integer("round").value_or(0);
  r.figure = o.number("figure").value_or(0);
  r.loss = o.number("loss");
  r.seconds = o.number("seconds").value_or(0);
  r.log = o.text("log").value_or("");
  r.ranks = o.integer("ranks");
  return r;
}

TuneCandidate read_candidate(ObjectReader& o, detail::DocContext& ctx) {
  for (const char* key : {"id", "sets", "outcome", "repetitions"}) o.require(key);
  TuneCandidate c;
  c.id = o.integer("id").value_or(0);
  c.sets = value_list<std::string>(o, "sets");
  c.numerics = o.text("numerics").value_or("");
  c.predicted_ratio = o.number("predicted_ratio");
  c.prediction_source = o.text("prediction_source").value_or("");
  c.planned_peak_bytes = o.integer("planned_peak_bytes");
  c.planned_fits = o.boolean("planned_fits");
  c.plan_note = o.text("plan_note").value_or("");
  c.outcome = o.text("outcome").value_or("");
  c.reason = o.text("reason").value_or("");
  c.repetitions = object_list<TuneRepetition>(o, ctx, "repetitions", read_repetition);
  c.rounds = o.integer("rounds").value_or(0);
  c.baseline_median = o.number("baseline_median");
  c.candidate_median = o.number("candidate_median");
  c.ratio = o.number("ratio");
  c.ci_low = o.number("ci_low");
  c.ci_high = o.number("ci_high");
  c.verdict = o.text("verdict").value_or("");
  c.loss_difference = o.number("loss_difference");
  c.loss_within_tolerance = o.boolean("loss_within_tolerance");
  c.seconds = o.number("seconds").value_or(0);
  return c;
}

}  // namespace

std::string tune_doc_text(const TuneDoc& d) {
  Json knobs = Json::array(), candidates = Json::array();
  for (const TuneKnob& k : d.knobs) knobs.push_back(knob_json(k));
  for (const TuneCandidate& c : d.candidates) candidates.push_back(candidate_json(c));
  Json j = {{"schema_version", kTuneSchemaVersion},
            {"what", kTuneWhat},
            {"inputs", inputs_json(d.inputs)},
            {"budget_s", d.budget_s},
            {"knobs", std::move(knobs)},
            {"candidates", std::move(candidates)},
            {"status", d.status},
            {"winner", opt(d.winner)},
            {"conclusion", d.conclusion},
            {"planner_check", d.planner_check},
            {"seconds_spent", d.seconds_spent},
            {"notes", d.notes}};
  detail::put_unknown(j, d.unknown);
  return j.dump(2) + "\n";
}

void write_tune_doc(const std::string& path, const TuneDoc& d) {
  output::write_file_atomic(path, tune_doc_text(d));
}

TuneDoc parse_tune_doc(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  TuneDoc d;
  detail::DocContext ctx{file, &d.unknown, nullptr};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kTuneSchemaVersion);
  doc.text("what");  // a constant description, written again
  doc.require("inputs");
  doc.require("candidates");
  d.inputs = detail::read_section<TuneInputs>(doc, "inputs", read_inputs).value_or(TuneInputs{});
  d.budget_s = doc.number("budget_s").value_or(0);
  d.knobs = object_list<TuneKnob>(doc, ctx, "knobs", read_knob);
  d.candidates = object_list<TuneCandidate>(
      doc, ctx, "candidates", [&](ObjectReader& o) { return read_candidate(o, ctx); });
  d.status = doc.text("status").value_or("");
  d.winner = doc.integer("winner");
  d.conclusion = doc.text("conclusion").value_or("");
  d.planner_check = doc.text("planner_check").value_or("");
  d.seconds_spent = doc.number("seconds_spent").value_or(0);
  d.notes = value_list<std::string>(doc, "notes");
  doc.keep_unknown();
  return d;
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
