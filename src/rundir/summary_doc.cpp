// summary.json's one field table, driving its one writer and its one reader: each typed section
// to its JSON object and back. Which keys a section writes (and which it leaves out) follows the
// figures, so a file read back rewrites byte-identical. schema_version is the one first-version
// field every file must have; later fields absent get a note; fields this version does not know
// are kept for a rewrite.
#include <limits>
#include <nlohmann/json.hpp>

#include "doc_tables.h"
#include "json_forms.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/summary.h"
#include "read_util.h"
#include "summary_sections.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::JsonField;
using detail::JsonFields;
using detail::member;
using detail::member_if_set;
using detail::ObjectReader;
using detail::only_when;
using detail::Presence;
using detail::section_if_set;
using detail::text_if_set;

const JsonFields<StepCounts>& step_count_fields() {
  static const JsonFields<StepCounts> f = {member("completed", &StepCounts::completed),
                                           member("max_steps", &StepCounts::max_steps),
                                           member("warmup_excluded", &StepCounts::warmup_excluded),
                                           member("measured", &StepCounts::measured)};
  return f;
}

const JsonFields<TimingFigures>& timing_fields() {
  using T = TimingFigures;
  static const JsonFields<T> f = {
      member("step_ms", &T::step_ms),
      member("data_ms", &T::data_ms),
      member("forward_ms", &T::forward_ms),
      member("backward_ms", &T::backward_ms),
      member("optimizer_ms", &T::optimizer_ms),
      text_if_set("note", &T::note),
      member_if_set("phase_sum_median_ms", &T::phase_sum_median_ms),
      member_if_set("unattributed_median_ms", &T::unattributed_median_ms)};
  return f;
}

const JsonFields<ThroughputFigures>& throughput_fields() {
  static const JsonFields<ThroughputFigures> f = {
      member("tokens_per_s", &ThroughputFigures::tokens_per_s),
      member("samples_per_s", &ThroughputFigures::samples_per_s)};
  return f;
}

// The counted FLOPs, written into flops itself; the other ops' and the ratio with the matmuls'.
const JsonFields<CountedFlops>& counted_flops_fields() {
  using C = CountedFlops;
  const auto counted = [](const C& c) { return c.matmul_per_step.has_value(); };
  static const JsonFields<C> f = {
      member("counted_matmul_per_step", &C::matmul_per_step),
      only_when(member("counted_other_per_step", &C::other_per_step), counted),
      only_when(member("counted_vs_analytic_ratio", &C::vs_analytic_ratio), counted),
      text_if_set("counted_note", &C::note)};
  return f;
}

const JsonFields<FlopsFigures>& flops_fields() {
  using F = FlopsFigures;
  static const JsonFields<F> f = detail::joined<F>(
      {{member("analytic_per_step", &F::analytic_per_step), member("formula", &F::formula),
        member("achieved_flops_per_s", &F::achieved_flops_per_s)},
       detail::inlined(&F::counted, counted_flops_fields())});
  return f;
}

const JsonFields<MfuFigures>& mfu_fields() {
  using M = MfuFigures;
  static const JsonFields<M> f = {
      member("value", &M::value), member("peak_flops_per_s", &M::peak_flops_per_s),
      member("peak_source", &M::peak_source), member("peak_method", &M::peak_method),
      text_if_set("warning", &M::warning)};
  return f;
}

// How a field of the last eval, written into loss itself, is read: eval_step says there is an
// eval; the others are read with it, but the final losses, which older hand-made files carry
// without eval_step, make one when they hold a value.
enum class EvalKey { kMarker, kWithEval, kOlderFiles };

JsonField<LossFigures> of_eval(const JsonField<EvalLoss>& f, EvalKey how) {
  return detail::converted<LossFigures>(
      f.key, f.presence,
      [w = f.write](const LossFigures& l) { return l.eval ? w(*l.eval) : detail::not_written(); },
      [r = f.read, how](LossFigures& l, ObjectReader& o, DocContext& ctx, const std::string& key) {
        if (how == EvalKey::kMarker && o.has(key)) l.eval.emplace();
        if (how == EvalKey::kOlderFiles && !l.eval && o.number(key)) l.eval.emplace();
        if (l.eval) r(*l.eval, o, ctx, key);
      });
}

// Without an eval, final_val_loss is null (the eval's other keys are left out).
JsonField<LossFigures> final_val_loss_field() {
  JsonField<LossFigures> f =
      of_eval(member("final_val_loss", &EvalLoss::val_loss), EvalKey::kOlderFiles);
  f.write = [w = f.write](const LossFigures& l) { return l.eval ? w(l) : Json(nullptr); };
  return f;
}

const JsonFields<LossFigures>& loss_fields() {
  using L = LossFigures;
  using E = EvalLoss;
  static const JsonFields<L> f = {
      member("task", &L::task),
      member("perplexity_note", &L::perplexity_note),
      member("final_train_step_loss", &L::final_train_step_loss),
      of_eval(member("eval_step", &E::step), EvalKey::kMarker),
      of_eval(member("final_train_perplexity", &E::train_perplexity), EvalKey::kWithEval),
      of_eval(member("final_train_accuracy", &E::train_accuracy), EvalKey::kWithEval),
      of_eval(member("final_val_accuracy", &E::val_accuracy), EvalKey::kWithEval),
      of_eval(text_if_set("accuracy_note", &E::accuracy_note), EvalKey::kWithEval),
      of_eval(member("final_train_loss", &E::train_loss), EvalKey::kOlderFiles),
      final_val_loss_field(),
      of_eval(member("final_val_perplexity", &E::val_perplexity), EvalKey::kOlderFiles),
      text_if_set("note", &L::note)};
  return f;
}

const JsonFields<ProcessFigures>& process_fields() {
  using P = ProcessFigures;
  static const JsonFields<P> f = {
      member("minor_faults_per_step", &P::minor_faults_per_step),
      member("involuntary_switches_per_step", &P::involuntary_switches_per_step),
      member("cpu_ms_per_step", &P::cpu_ms_per_step)};
  return f;
}

const JsonFields<Summary>& memory_fields() {
  static const JsonFields<Summary> f = {member("peak_rss_bytes", &Summary::peak_rss_bytes)};
  return f;
}

// A name-table enum: null (or absent, when without_it_null is false) without one; a value that is
// not one of its names is a DataError naming the file and the field.
template <typename E>
JsonField<Summary> optional_name(std::string key,
                                 std::optional<E> Summary::*m,
                                 bool without_it_null,
                                 Presence p) {
  return detail::converted<Summary>(
      std::move(key), p,
      [m, without_it_null](const Summary& s) {
        if (s.*m) return Json(std::string(config::name(*(s.*m))));
        return without_it_null ? Json(nullptr) : detail::not_written();
      },
      [m](Summary& s, ObjectReader& doc, DocContext&, const std::string& key) {
        const Json* v = doc.raw(key);
        if (v == nullptr || v->is_null()) return;
        s.*m = parse_name<E>(v->is_string() ? v->get<std::string>() : llmprof::printable_json(*v),
                             doc.file(), key);
      });
}

// The merged data-parallel run's mean of the ranks' last losses: NaN (a diverged run) is written
// null, and read back as NaN so that it is written again.
JsonField<Summary> global_loss_field() {
  return detail::converted<Summary>(
      "final_global_train_loss", Presence::kOptional,
      [](const Summary& s) {
        return s.final_global_train_loss ? Json(*s.final_global_train_loss) : detail::not_written();
      },
      [](Summary& s, ObjectReader& doc, DocContext&, const std::string& key) {
        if (doc.raw(key) == nullptr) return;
        s.final_global_train_loss =
            doc.number(key).value_or(std::numeric_limits<double>::quiet_NaN());
      });
}

}  // namespace

namespace detail {

// The document's fields, each key once, in the order the reader reads them (summary_keys' order).
const JsonFields<Summary>& summary_fields() {
  using S = Summary;
  static const JsonFields<S> f = joined<S>(
      {{optional_name("status", &S::status, true, Presence::kOptional),
        null_if_empty("message", &S::message),
        optional_name("profile_level", &S::profile_level, false, Presence::kLater),
        section_if_set("steps", &S::steps, step_count_fields()), member("wall_s", &S::wall_s),
        member("parameters", &S::parameters), section_if_set("timing", &S::timing, timing_fields()),
        section_if_set("throughput", &S::throughput, throughput_fields()),
        section_if_set("flops", &S::flops, flops_fields()),
        section_if_set("mfu", &S::mfu, mfu_fields()),
        section_if_set("loss", &S::loss, loss_fields()), group("memory", memory_fields()),
        section_if_set("process", &S::process, process_fields()),
        section_if_set("profiler_overhead", &S::overhead, overhead_fields()),
        section_if_set("modules", &S::modules, modules_fields()),
        section_if_set("gpu", &S::gpu, gpu_fields()),
        section_if_set("energy", &S::energy, summary_energy_fields()),
        section_if_set("distributed", &S::distributed, distributed_fields()),
        member("config_notes", &S::config_notes)},
       embedded(&S::context, context_fields()),
       {text_if_set("run_dir", &S::run_dir), global_loss_field()}});
  return f;
}

}  // namespace detail

const std::vector<std::string>& summary_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k{"schema_version"};
    for (const auto& f : detail::summary_fields()) k.push_back(f.key);
    return k;
  }();
  return keys;
}

std::string summary_text(const Summary& s) {
  return detail::write_doc(s, kSummarySchemaVersion, detail::summary_fields()).dump(2) + "\n";
}

void write_summary(const std::string& path, const Summary& s) {
  output::write_file_atomic(path, summary_text(s));
}

Summary parse_summary(const std::string& text, const std::string& file) {
  const Json j = detail::parse_object(text, file);
  Summary s;
  DocContext ctx{file, &s.unknown, &s.read_notes};
  ObjectReader doc(j, ctx, "");
  s.schema_version = detail::check_version(doc, kSummarySchemaVersion);
  detail::read_object(s, doc, ctx, detail::summary_fields());
  doc.keep_unknown();
  return s;
}

std::optional<double> Summary::median_step_ms() const {
  if (!timing || !timing->step_ms) return std::nullopt;
  return timing->step_ms->median;
}

std::optional<double> Summary::median_tokens_per_s() const {
  if (!throughput || !throughput->tokens_per_s) return std::nullopt;
  return throughput->tokens_per_s->median;
}

std::optional<double> Summary::median_mfu() const {
  if (!mfu || !mfu->value) return std::nullopt;
  return mfu->value->median;
}

}  // namespace llmprof::rundir
