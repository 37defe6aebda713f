// sweep.json's field table, driving its one writer and one reader (rundir/sweep_doc.h), the
// status alone as report reads it, and the generated field lists of the three sweep documents.
#include "llmprof/rundir/sweep_doc.h"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "json_forms.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "read_util.h"
#include "sweep_doc_json.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::JsonField;
using detail::JsonFields;
using detail::member;
using detail::null_if_empty;
using detail::ObjectReader;
using detail::OJson;
using detail::Presence;

// A sweep.json point's values: {key: value}, written in the grid's axis order (the reader's JSON
// sorts them: parse_sweep_doc puts them back in the grid's order).
JsonField<PlanPoint, OJson> value_object_field() {
  return detail::converted<PlanPoint, OJson>(
      "values", Presence::kRequired,
      [](const PlanPoint& p) {
        OJson values = OJson::object();
        for (const auto& [key, value] : p.values) values[key] = value;
        return values;
      },
      [](PlanPoint& p, ObjectReader& o, DocContext&, const std::string& key) {
        const Json* v = o.raw(key);
        if (v == nullptr || v->is_null()) return;
        if (!v->is_object()) o.fail(key, "an object of strings");
        for (const auto& [k, value] : v->items()) {
          if (!value.is_string()) o.fail(key, "an object of strings");
          p.values.emplace_back(k, value.get<std::string>());
        }
      });
}

// values in the grid's axis order, the order they were written in; keys outside the grid follow
// in the order they came.
void put_in_grid_order(std::vector<std::pair<std::string, std::string>>& values,
                       const std::vector<GridAxis>& grid) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> placed;
  for (const GridAxis& axis : grid) {
    for (const auto& kv : values) {
      if (kv.first == axis.key && placed.insert(axis.key).second) out.push_back(kv);
    }
  }
  for (const auto& kv : values) {
    if (placed.count(kv.first) == 0) out.push_back(kv);
  }
  values = std::move(out);
}

// A point: the plan's point and its outcome ("" written as null but for log; no invocation: the
// context's says which ran), in the release's order.
const JsonFields<SweepDocPoint, OJson>& sweep_point_fields() {
  using P = SweepDocPoint;
  using R = PointOutcome;
  constexpr Presence kFirst = Presence::kRequired;
  constexpr Presence kLater = Presence::kLater;
  const auto point = [](JsonField<PlanPoint, OJson> f) { return detail::of_member(&P::point, f); };
  const auto outcome = [](JsonField<R, OJson> f) { return detail::of_member(&P::outcome, f); };
  static const JsonFields<P, OJson> f = {
      point(member<OJson>("id", &PlanPoint::id, kFirst)),
      point(member<OJson>("index", &PlanPoint::index, kFirst)),
      point(member<OJson>("repeat", &PlanPoint::repeat, kFirst)),
      point(value_object_field()),
      outcome(detail::name_member<OJson>("status", &R::status, kFirst)),
      outcome(detail::small_int_member("exit_code", &R::exit_code, kFirst)),
      outcome(detail::small_int_member("signal", &R::signal, kFirst)),
      outcome(null_if_empty<OJson>("message", &R::message, kFirst)),
      outcome(null_if_empty<OJson>("run_dir", &R::run_dir, kFirst)),
      outcome(member<OJson>("log", &R::log_path, kFirst)),
      outcome(member<OJson>("duration_s", &R::duration_s, kFirst)),
      member<OJson>("reused", &P::reused, kFirst),
      outcome(member<OJson>("moved_aside", &R::moved_aside, kFirst)),
      outcome(null_if_empty<OJson>("host", &R::host, kLater)),
      outcome(null_if_empty<OJson>("slurm_job_id", &R::slurm_job_id, kLater)),
      outcome(null_if_empty<OJson>("slurm_task_id", &R::slurm_task_id, kLater)),
      outcome(null_if_empty<OJson>("start_time", &R::start_time, kLater)),
      outcome(null_if_empty<OJson>("end_time", &R::end_time, kLater))};
  return f;
}

// The number of points per status, in order of first appearance: written from the points (each
// read to check it is an integer, then left).
JsonField<SweepDoc, OJson> counts_field() {
  return detail::converted<SweepDoc, OJson>(
      "counts", Presence::kRequired,
      [](const SweepDoc& d) {
        OJson counts = OJson::object();
        for (const SweepDocPoint& p : d.points) {
          const std::string status(config::name(p.outcome.status));
          counts[status] = counts.value(status, 0) + 1;
        }
        return counts;
      },
      [](SweepDoc&, ObjectReader& o, DocContext&, const std::string& key) {
        if (std::optional<ObjectReader> counts = o.object(key)) {
          for (const auto& [status, n] : counts->raw_object().items()) counts->integer(status);
        }
      });
}

}  // namespace

namespace detail {

const JsonFields<SweepDoc, OJson>& sweep_doc_fields() {
  static const JsonFields<SweepDoc, OJson> f =
      joined<SweepDoc, OJson>({embedded(&SweepDoc::context, context_fields(SweepFile::kSweep)),
                               {counts_field(), list("points", &SweepDoc::points,
                                                     sweep_point_fields(), Presence::kRequired)}});
  return f;
}

}  // namespace detail

std::string sweep_doc_text(const SweepDoc& d) {
  return detail::ordered_doc_text(d, detail::sweep_doc_fields());
}

void write_sweep_doc(const std::string& path, const SweepDoc& d) {
  output::write_file_atomic(path, sweep_doc_text(d));
}

SweepDoc parse_sweep_doc(const std::string& text,
                         const std::string& file,
                         std::vector<std::string>* notes) {
  SweepDoc d = detail::read_ordered_doc(text, file, notes, detail::sweep_doc_fields());
  for (SweepDocPoint& p : d.points) put_in_grid_order(p.point.values, d.context.grid);
  return d;
}

SweepDoc read_sweep_doc(const std::string& path) {
  return parse_sweep_doc(detail::read_text(path), path);
}

SweepDocStatus read_sweep_doc_status(const std::string& path) {
  const Json j = detail::parse_object(detail::read_text(path), path);
  DocContext ctx{path, nullptr, nullptr};
  ObjectReader doc(j, ctx, "");
  SweepContext c;
  const JsonFields<SweepContext, OJson>& fields = detail::sweep_status_fields();
  for (const JsonField<SweepContext, OJson>& f : fields) f.read(c, doc, ctx, f.key);
  SweepDocStatus out;
  if (const Json* status = doc.raw(fields.front().key); status != nullptr && !status->is_null()) {
    out.status = c.status;
  }
  out.note = c.status_note;
  return out;
}

namespace {

// Every field of the three documents set, for their field lists.
SweepContext full_context() {
  SweepContext c;
  c.status_note = c.peak_measured_at = "text";
  c.peak_flops_per_s = 1.5;
  c.grid = {GridAxis{"<key>", {"text"}, "text"}};
  return c;
}

// A context with every null written: threads_per_point is null when threads is swept.
SweepContext null_context() {
  SweepContext c;
  c.threads_per_point = 0;
  return c;
}

PointOutcome full_outcome() {
  PointOutcome o;
  o.exit_code = o.signal = 1;
  o.duration_s = 1.5;
  o.message = o.run_dir = o.host = o.slurm_job_id = o.slurm_task_id = o.start_time =
      o.end_time = "text";
  return o;
}

// The page: a title, the paragraph, the table of fields from the writer (sorted by name).
std::string fields_page(const std::string& title,
                        const std::string& paragraph,
                        const std::string& full_text,
                        const std::string& none_text) {
  return detail::field_table_page(fmt::format("# {} fields (schema_version {})\n\n{}\n\n", title,
                                              kSweepSchemaVersion, paragraph),
                                  Json::parse(full_text), Json::parse(none_text));
}

constexpr const char* kListing =
    "The file writes its keys in the writer's fixed order (schema_version first); this list is "
    "sorted by name. \"always; null when unknown\": null when the sweep has no such figure or "
    "text. Within an array, \"with its figure\" means in every element.";

}  // namespace

std::string sweep_plan_fields_doc() {
  SweepPlan full;
  full.context = full_context();
  full.points = {PlanPoint{1, 1, {{"<key>", "text"}}, "text"}};
  return fields_page(
      "`plan.json`",
      std::string("Generated from `rundir::SweepPlan` (include/llmprof/rundir/sweep_doc.h) "
                  "through its writer; `tests/rundir/sweep_doc_test.cpp` checks that this file "
                  "matches. ") + kListing +
          " `points[].values` is an array of `[key, value]` pairs in the grid's axis order. "
          "Read: every field is required but `status_note` and `threads_source`, added later "
          "(absent: null with a note).",
      sweep_plan_text(full), sweep_plan_text(SweepPlan{0, null_context(), true, {}, {}}));
}

std::string point_record_fields_doc() {
  PointRecord full;
  full.outcome = full_outcome();
  full.outcome.moved_aside = {"text"};
  return fields_page(
      "`runs/<id>.point.json`",
      std::string("Generated from `rundir::PointRecord` (include/llmprof/rundir/sweep_doc.h) "
                  "through its writer; `tests/rundir/sweep_doc_test.cpp` checks that this file "
                  "matches. ") + kListing +
          " Texts not known yet are written as \"\". Read: every field is required.",
      point_record_text(full), point_record_text(PointRecord{}));
}

std::string sweep_doc_fields_doc() {
  SweepDoc full;
  full.context = full_context();
  full.points = {SweepDocPoint{PlanPoint{1, 1, {{"<key>", "text"}}, "text"}, full_outcome(), true}};
  std::string text = sweep_doc_text(full);
  return fields_page(
      "`sweep.json`",
      std::string("Generated from `rundir::SweepDoc` (include/llmprof/rundir/sweep_doc.h) "
                  "through its writer; `tests/rundir/sweep_doc_test.cpp` checks that this file "
                  "matches. ") + kListing +
          " `counts` holds the number of points per status (`counts.<status>`), in order of "
          "first appearance; `points[].values` maps each swept key to its value, in the grid's "
          "axis order. Read: the fields of the file's first version are required; added later "
          "(absent: null with a note): `status_note`, `launcher`, `workdir`, `threads_source`, "
          "`peak_flops_per_s`, `peak_source`, `peak_measured_at`, `peak_reused`, `invocation`, "
          "and each point's `host`, `slurm_job_id`, `slurm_task_id`, `start_time`, `end_time`. "
          "report and check read `status` and `status_note` alone.",
      text, sweep_doc_text(SweepDoc{0, null_context(), {}, {}}));
}

}  // namespace llmprof::rundir
