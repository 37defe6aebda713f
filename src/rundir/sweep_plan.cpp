// plan.json's and runs/<id>.point.json's one writer and one reader (rundir/sweep_doc.h).
#include <fmt/format.h>

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

// A plan point's values: [[key, value], ...] in axis order.
std::vector<std::pair<std::string, std::string>> read_value_pairs(ObjectReader& o) {
  std::vector<std::pair<std::string, std::string>> out;
  const Json* a = o.raw("values");
  if (a == nullptr || a->is_null()) return out;
  if (!a->is_array()) o.fail("values", "an array of [key, value] pairs of strings");
  for (const Json& kv : *a) {
    if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string() || !kv[1].is_string()) {
      o.fail("values", "an array of [key, value] pairs of strings");
    }
    out.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
  }
  return out;
}

PlanPoint read_plan_point(ObjectReader& o) {
  for (const char* key : {"id", "index", "repeat", "values"}) o.require(key);
  PlanPoint p;
  p.id = o.text("id").value_or("");
  p.index = o.integer("index").value_or(0);
  p.repeat = o.integer("repeat").value_or(0);
  p.values = read_value_pairs(o);
  return p;
}

}  // namespace

std::string sweep_plan_text(const SweepPlan& d) {
  OJson j = detail::context_json(d.context);
  j["threads_from_env"] = d.threads_from_env;
  OJson points = OJson::array();
  for (const PlanPoint& p : d.points) {
    OJson values = OJson::array();
    for (const auto& [key, value] : p.values) values.push_back({key, value});
    points.push_back(
        {{"id", p.id}, {"index", p.index}, {"repeat", p.repeat}, {"values", std::move(values)}});
  }
  j["points"] = std::move(points);
  return detail::ordered_text(std::move(j), d.unknown);
}

void write_sweep_plan(const std::string& path, const SweepPlan& d) {
  output::write_file_atomic(path, sweep_plan_text(d));
}

SweepPlan parse_sweep_plan(const std::string& text,
                           const std::string& file,
                           std::vector<std::string>* notes) {
  const Json j = detail::parse_object(text, file);
  SweepPlan d;
  DocContext ctx{file, &d.unknown, notes};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kSweepSchemaVersion);
  d.context = detail::read_context(doc, ctx, detail::SweepFile::kPlan);
  doc.require("threads_from_env");
  d.threads_from_env = doc.boolean("threads_from_env").value_or(true);
  doc.require("points");
  d.points = detail::object_list<PlanPoint>(doc, ctx, "points", read_plan_point);
  doc.keep_unknown();
  return d;
}

SweepPlan read_sweep_plan(const std::string& path) {
  return parse_sweep_plan(detail::read_text(path), path);
}

std::string point_record_text(const PointRecord& d) {
  OJson j;
  j["schema_version"] = kSweepSchemaVersion;
  j["id"] = d.id;
  detail::put_outcome(j, d.outcome);
  return detail::ordered_text(std::move(j), d.unknown);
}

void write_point_record(const std::string& path, const PointRecord& d) {
  output::write_file_atomic(path, point_record_text(d));
}

PointRecord parse_point_record(const std::string& text,
                               const std::string& file,
                               std::vector<std::string>* notes) {
  const Json j = detail::parse_object(text, file);
  PointRecord d;
  DocContext ctx{file, &d.unknown, notes};
  ObjectReader doc(j, ctx, "");
  d.schema_version = detail::check_version(doc, kSweepSchemaVersion);
  doc.require("id");
  d.id = doc.text("id").value_or("");
  d.outcome = detail::read_outcome(doc, detail::SweepFile::kPointRecord);
  doc.keep_unknown();
  return d;
}

PointRecord read_point_record(const std::string& path) {
  return parse_point_record(detail::read_text(path), path);
}

}  // namespace llmprof::rundir
