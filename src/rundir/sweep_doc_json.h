// What the three sweep documents (rundir/sweep_doc.h) share: the context block of plan.json and
// sweep.json, written and read once; a point's outcome; and the layer over json_doc.h for
// documents written in their writer's order (nlohmann::ordered_json) rather than sorted: a
// release file keeps its key order, so its rewrite is byte-identical. Private to src/rundir.
#pragma once

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "doc_lists.h"
#include "json_doc.h"
#include "llmprof/rundir/sweep_doc.h"

namespace llmprof::rundir::detail {

// A document written in its writer's key order.
using OJson = nlohmann::ordered_json;

template <typename T>
OJson or_null(const std::optional<T>& v) {
  return v ? OJson(*v) : OJson(nullptr);
}
// "" is written as null.
inline OJson empty_as_null(const std::string& s) { return s.empty() ? OJson(nullptr) : OJson(s); }

// The document's text: the kept unknown values put back at their pointers (at the end of their
// object), two-space indent, a final newline.
std::string ordered_text(OJson doc, const std::map<std::string, std::string>& unknown);

// A field of the document's first version (absent: DataError naming file and field), or one
// added later (absent: a note, and the reader's default).
inline void field_since(ObjectReader& o, const char* key, bool later) {
  if (later) {
    o.later(key);
  } else {
    o.require(key);
  }
}

// An integer in int's range, or nullopt for absent or null.
std::optional<int> small_integer(ObjectReader& o, const std::string& key);

// The context block, schema_version first and resume_policy last.
OJson context_json(const SweepContext& c);

// Which document a block is read from, for the fields its first version lacks: sweep.json's first
// version predates the launcher, the shared peak, the invocation and where a point ran, which
// plan.json and the point record had from their first.
enum class SweepFile { kPlan, kPointRecord, kSweep };

// The context block of doc (schema_version checked by the caller).
SweepContext read_context(ObjectReader& doc, DocContext& ctx, SweepFile in);

// The status and its note (read_context's first two fields).
void read_sweep_status(ObjectReader& doc, SweepContext& c);

// A point outcome's fields in a point record (empty texts written as "").
void put_outcome(OJson& j, const PointOutcome& o);
PointOutcome read_outcome(ObjectReader& o, SweepFile in);  // sweep.json: no invocation

}  // namespace llmprof::rundir::detail
