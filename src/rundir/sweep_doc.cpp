// sweep.json's one writer and one reader (rundir/sweep_doc.h), the status alone as report reads
// it, and the generated field lists of the three sweep documents.
#include <fmt/format.h>

#include <set>
#include <utility>

#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/sweep_doc.h"
#include "read_util.h"
#include "sweep_doc_json.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::ObjectReader;
using detail::OJson;

OJson sweep_point_json(const SweepDocPoint& p) {
  OJson values = OJson::object();
  for (const auto& [key, value] : p.point.values) values[key] = value;
  const PointOutcome& r = p.outcome;
  return {{"id", p.point.id},
          {"index", p.point.index},
          {"repeat", p.point.repeat},
          {"values", std::move(values)},
          {"status", config::name(r.status)},
          {"exit_code", detail::or_null(r.exit_code)},
          {"signal", detail::or_null(r.signal)},
          {"message", detail::empty_as_null(r.message)},
          {"run_dir", detail::empty_as_null(r.run_dir)},
          {"log", r.log_path},
          {"duration_s", detail::or_null(r.duration_s)},
          {"reused", p.reused},
          {"moved_aside", r.moved_aside},
          {"host", detail::empty_as_null(r.host)},
          {"slurm_job_id", detail::empty_as_null(r.slurm_job_id)},
          {"slurm_task_id", detail::empty_as_null(r.slurm_task_id)},
          {"start_time", detail::empty_as_null(r.start_time)},
          {"end_time", detail::empty_as_null(r.end_time)}};
}

// sweep.json's values object ({key: value}) in the grid's axis order, the order it was written
// in (the reader's JSON sorts keys); keys outside the grid follow, sorted.
std::vector<std::pair<std::string, std::string>> values_in_grid_order(
    ObjectReader& o, const std::vector<GridAxis>& grid) {
  std::vector<std::pair<std::string, std::string>> out;
  const Json* v = o.raw("values");
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_object()) o.fail("values", "an object of strings");
  for (const auto& [key, value] : v->items()) {
    if (!value.is_string()) o.fail("values", "an object of strings");
  }
  std::set<std::string> placed;
  for (const GridAxis& axis : grid) {
    if (v->contains(axis.key) && placed.insert(axis.key).second) {
      out.emplace_back(axis.key, (*v)[axis.key].get<std::string>());
    }
  }
  for (const auto& [key, value] : v->items()) {
    if (placed.count(key) == 0) out.emplace_back(key, value.get<std::string>());
  }
  return out;
}

}  // namespace

std::string sweep_doc_text(const SweepDoc& d) {
  OJson j = detail::context_json(d.context);
  OJson counts = OJson::object();
  OJson points = OJson::array();
  for (const SweepDocPoint& p : d.points) {
    const std::string status(config::name(p.outcome.status));
    counts[status] = counts.value(status, 0) + 1;
    points.push_back(sweep_point_json(p));
  }
  j["counts"] = std::move(counts);
  j["points"] = std::move(points);
  return detail::ordered_text(std::move(j), d.unknown);
}

void write_sweep_doc(const std::string& path, const SweepDoc& d) {
  output::write_file_atomic(path, sweep_doc_text(d));
}

SweepDoc parse_sweep_doc(const std::string& text,
                         const std::string& file,
                         std::vector<std::string>* notes) {
  const Json j = detail::parse_object(text, file);
  SweepDoc d;
  DocContext ctx{file, &d.unknown, notes};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kSweepSchemaVersion);
  d.context = detail::read_context(doc, ctx, detail::SweepFile::kSweep);
  doc.require("counts");
  if (std::optional<ObjectReader> counts = doc.object("counts")) {
    for (const auto& [status, n] : counts->raw_object().items()) counts->integer(status);
  }  // written again from the points
  doc.require("points");
  const std::vector<GridAxis>& grid = d.context.grid;
  d.points = detail::object_list<SweepDocPoint>(doc, ctx, "points", [&grid](ObjectReader& o) {
    for (const char* key : {"id", "index", "repeat", "values", "reused"}) o.require(key);
    SweepDocPoint p;
    p.point.id = o.text("id").value_or("");
    p.point.index = o.integer("index").value_or(0);
    p.point.repeat = o.integer("repeat").value_or(0);
    p.point.values = values_in_grid_order(o, grid);
    p.outcome = detail::read_outcome(o, detail::SweepFile::kSweep);
    p.reused = o.boolean("reused").value_or(false);
    return p;
  });
  doc.keep_unknown();
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
  detail::read_sweep_status(doc, c);
  SweepDocStatus out;
  if (doc.has("status") && !j["status"].is_null()) out.status = c.status;
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
