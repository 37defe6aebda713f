// The JSON document layer under every typed run-directory document (summary.json first): reads
// an object field by field, naming the file and the field in every error, notes the later fields
// a file predates, and keeps the fields it does not know so that a rewrite loses nothing. Keys
// are written in nlohmann::json's fixed (sorted) order, so a document reads back and rewrites
// byte-identical. Private to src/rundir.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llmprof/base/stats.h"

namespace llmprof::rundir::detail {

using Json = nlohmann::json;

// What a document's reader carries through every object it reads.
struct DocContext {
  std::string file;                             // the path, for every message
  std::map<std::string, std::string>* unknown;  // JSON pointer -> the unknown value's text
  std::vector<std::string>* notes;              // later fields the file predates
};

// One JSON object of a document. A wrong type is a DataError "<file>: <field> is <value>, not a
// <type>"; `required` fields (first version) missing are "<file>: <field> is missing".
class ObjectReader {
 public:
  ObjectReader(const Json& object, DocContext& ctx, std::string pointer);

  bool has(const std::string& key) const;  // present, null included
  // Absent or null -> nullopt; a later field that is absent adds a note "... (null)".
  std::optional<double> number(const std::string& key);
  std::optional<int64_t> integer(const std::string& key);
  std::optional<std::string> text(const std::string& key);
  std::optional<bool> boolean(const std::string& key);
  // n, mean, median, p10, p90, min, max, stddev, cv; absent or null -> nullopt.
  std::optional<llmprof::Summary> stats(const std::string& key);
  // A sub-object; absent or null -> nullopt. Its unknown keys are kept when it is read.
  std::optional<ObjectReader> object(const std::string& key);
  // An array of objects, each read with its unknown keys kept; absent or null -> none.
  std::vector<ObjectReader> objects(const std::string& key);
  // The raw value (absent -> nullptr), taken as known.
  const Json* raw(const std::string& key);

  // A first-version field: absent is a DataError naming the file and the field.
  void require(const std::string& key) const;
  // A field added after the first version: absent gets a note naming it.
  void later(const std::string& key);
  // The unread keys of this object go to ctx.unknown (call once, after reading).
  void keep_unknown();
  // The value at key (present) as JSON text, kept to be written back. Nested over 64 levels it is
  // a DataError: dump() recurses once per level, and no llmprof writes that deep.
  std::string kept(const std::string& key) const;

  const std::string& pointer() const { return pointer_; }
  const std::string& file() const { return ctx_->file; }
  const Json& raw_object() const { return object_; }
  std::string field(const std::string& key) const;  // "timing.step_ms" for messages
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

 private:
  const Json* get(const std::string& key);
  const Json& object_;
  DocContext* ctx_;
  std::string pointer_;
  std::set<std::string> read_;
};

// A document's text parsed: bad JSON is a DataError naming the file, line and column; a value
// that is not an object is "<file>: not a JSON object (an array)".
Json parse_object(const std::string& text, const std::string& file);

// A document's schema_version: absent is an error; above `known` is refused with a message
// ("written by a newer llmprof ... upgrade").
int check_version(ObjectReader& doc, int known);

// A list of strings; absent or null is empty, anything else an error naming the field.
std::vector<std::string> string_list(ObjectReader& o, const std::string& key);

// A section read by `f` when present (not null), its unknown keys kept.
template <typename T, typename F>
std::optional<T> read_section(ObjectReader& doc, const std::string& key, F&& f) {
  std::optional<ObjectReader> o = doc.object(key);
  if (!o) return std::nullopt;
  T value = f(*o);
  o->keep_unknown();
  return value;
}

// Writing: null for nullopt.
template <typename T>
Json opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}
// A text where "" means unknown: null.
inline Json text_or_null(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }
Json stats_json(const std::optional<llmprof::Summary>& s);
// The generated field lists (docs/summary.md, docs/env.md): one table row per leaf of `full`,
// a document with every figure set; `none` is the same with none set, so a key's presence in
// it says whether it is always written, null when unknown, or written only with its figure.
void doc_field_rows(const Json& full, const Json* none, const std::string& path, std::string& out);
// A generated field page: `heading` (the title and its paragraphs, ending in a blank line), then
// the table of doc_field_rows(full, &none).
std::string field_table_page(std::string heading, const Json& full, const Json& none);
// Puts every kept unknown value back at its pointer.
void put_unknown(Json& doc, const std::map<std::string, std::string>& unknown);

}  // namespace llmprof::rundir::detail

namespace llmprof::rundir {
struct Env;
namespace detail {
// env.json's fields but schema_version, written and read (bench.json's context block).
Json env_body_json(const Env& e);
void read_env_body(ObjectReader& doc, DocContext& ctx, Env& e);
}  // namespace detail
}  // namespace llmprof::rundir
