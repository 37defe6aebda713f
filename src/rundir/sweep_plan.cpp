// plan.json's and runs/<id>.point.json's field tables, driving their one writer and one reader
// each (rundir/sweep_doc.h).
#include <string>
#include <utility>
#include <vector>

#include "json_forms.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/sweep_doc.h"
#include "read_util.h"
#include "sweep_doc_json.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::JsonFields;
using detail::member;
using detail::ObjectReader;
using detail::OJson;
using detail::Presence;

// A plan point's values: [[key, value], ...] in axis order.
detail::JsonField<PlanPoint, OJson> value_pairs_field() {
  return detail::converted<PlanPoint, OJson>(
      "values", Presence::kRequired,
      [](const PlanPoint& p) {
        OJson values = OJson::array();
        for (const auto& [key, value] : p.values) values.push_back({key, value});
        return values;
      },
      [](PlanPoint& p, ObjectReader& o, DocContext&, const std::string& key) {
        const Json* a = o.raw(key);
        if (a == nullptr || a->is_null()) return;
        if (!a->is_array()) o.fail(key, "an array of [key, value] pairs of strings");
        for (const Json& kv : *a) {
          if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string() || !kv[1].is_string()) {
            o.fail(key, "an array of [key, value] pairs of strings");
          }
          p.values.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
        }
      });
}

const JsonFields<PlanPoint, OJson>& plan_point_fields() {
  static const JsonFields<PlanPoint, OJson> f = {
      member<OJson>("id", &PlanPoint::id, Presence::kRequired),
      member<OJson>("index", &PlanPoint::index, Presence::kRequired),
      member<OJson>("repeat", &PlanPoint::repeat, Presence::kRequired), value_pairs_field()};
  return f;
}

}  // namespace

namespace detail {

// The fields, each key once: the writer's, in its order, and the reader's.
const JsonFields<SweepPlan, OJson>& sweep_plan_fields() {
  using P = SweepPlan;
  static const JsonFields<P, OJson> f = joined<P, OJson>(
      {embedded(&P::context, context_fields(SweepFile::kPlan)),
       {member<OJson>("threads_from_env", &P::threads_from_env, Presence::kRequired),
        list("points", &P::points, plan_point_fields(), Presence::kRequired)}});
  return f;
}

const JsonFields<PointRecord, OJson>& point_record_fields() {
  using R = PointRecord;
  static const JsonFields<R, OJson> f =
      joined<R, OJson>({{member<OJson>("id", &R::id, Presence::kRequired)},
                        embedded(&R::outcome, record_outcome_fields())});
  return f;
}

}  // namespace detail

std::string sweep_plan_text(const SweepPlan& d) {
  return detail::ordered_doc_text(d, detail::sweep_plan_fields());
}

void write_sweep_plan(const std::string& path, const SweepPlan& d) {
  output::write_file_atomic(path, sweep_plan_text(d));
}

SweepPlan parse_sweep_plan(const std::string& text,
                           const std::string& file,
                           std::vector<std::string>* notes) {
  return detail::read_ordered_doc(text, file, notes, detail::sweep_plan_fields());
}

SweepPlan read_sweep_plan(const std::string& path) {
  return parse_sweep_plan(detail::read_text(path), path);
}

std::string point_record_text(const PointRecord& d) {
  return detail::ordered_doc_text(d, detail::point_record_fields());
}

void write_point_record(const std::string& path, const PointRecord& d) {
  output::write_file_atomic(path, point_record_text(d));
}

PointRecord parse_point_record(const std::string& text,
                               const std::string& file,
                               std::vector<std::string>* notes) {
  return detail::read_ordered_doc(text, file, notes, detail::point_record_fields());
}

PointRecord read_point_record(const std::string& path) {
  return parse_point_record(detail::read_text(path), path);
}

}  // namespace llmprof::rundir
