// What the three sweep documents (rundir/sweep_doc.h) share: the field tables (json_fields.h) of
// the context block of plan.json and sweep.json and of a point record's outcome, each key written
// once; and the layer for documents written in their writer's order (nlohmann::ordered_json, the
// tables' order) rather than sorted: a release file keeps its key order, so its rewrite is
// byte-identical. Private to src/rundir.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "json_fields.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/sweep_doc.h"

namespace llmprof::rundir::detail {

// A document written in its writer's key order.
using OJson = nlohmann::ordered_json;

// Which document a table is read from, for the fields its first version lacks: sweep.json's first
// version predates the launcher, the shared peak, the invocation and where a point ran, which
// plan.json and the point record had from their first.
enum class SweepFile { kPlan, kPointRecord, kSweep };

// A field of the document's first version (absent: DataError naming file and field), or, in
// sweep.json, one added later (absent: a note, and the reader's default).
inline Presence since_first_or_later(SweepFile in) {
  return in == SweepFile::kSweep ? Presence::kLater : Presence::kRequired;
}

// The context block's status and its note: its first two fields, which report and check read
// alone (read_sweep_doc_status).
const JsonFields<SweepContext, OJson>& sweep_status_fields();
// The context block, status first and resume_policy last, as plan.json or sweep.json has it.
const JsonFields<SweepContext, OJson>& context_fields(SweepFile in);
// A point record's outcome: texts not known yet are written as "".
const JsonFields<PointOutcome, OJson>& record_outcome_fields();

// The documents' tables: plan.json, runs/<id>.point.json, sweep.json.
const JsonFields<SweepPlan, OJson>& sweep_plan_fields();
const JsonFields<PointRecord, OJson>& point_record_fields();
const JsonFields<SweepDoc, OJson>& sweep_doc_fields();

// An int of the outcome (exit code, signal): null when unknown; outside int's range a DataError.
JsonField<PointOutcome, OJson> small_int_member(std::string key,
                                                std::optional<int> PointOutcome::*m,
                                                Presence p);

// The document's text: schema_version, the table's fields in order, the kept unknown values put
// back at their pointers (at the end of their object); two-space indent, a final newline.
template <typename Doc>
std::string ordered_doc_text(const Doc& d, const JsonFields<Doc, OJson>& fields) {
  OJson doc = OJson::object();
  doc["schema_version"] = kSweepSchemaVersion;
  OJson body = write_object(d, fields);
  for (auto& item : body.items()) doc[item.key()] = std::move(item.value());
  for (const auto& [pointer, text] : d.unknown) {
    doc[OJson::json_pointer(pointer)] = OJson::parse(text);
  }
  return doc.dump(2) + "\n";
}

// The document read from text: schema_version checked (a newer one refused), the table's fields,
// the unknown keys kept in d.unknown; notes (may be null) get the later fields the file lacks.
template <typename Doc>
Doc read_ordered_doc(const std::string& text,
                     const std::string& file,
                     std::vector<std::string>* notes,
                     const JsonFields<Doc, OJson>& fields) {
  const Json j = parse_object(text, file);
  Doc d;
  DocContext ctx{file, &d.unknown, notes};
  ObjectReader doc(j, ctx, "");
  d.schema_version = check_version(doc, kSweepSchemaVersion);
  read_object(d, doc, ctx, fields);
  doc.keep_unknown();
  return d;
}

}  // namespace llmprof::rundir::detail
