// A JSON document's field table: each field's key written once, with the member it holds and its
// conversion, the way the CSV tables have one column table (table_reader.h). The writer and the
// reader are both driven by it (write_object, read_object), so a key the writer writes is one the
// reader reads, and the generated field pages (docs/*.md), made from the writer, follow.
//
// Reading into a fresh object: a field absent or null leaves its member as the struct's default
// (nullopt, "", 0, an empty list); a wrong type is the document layer's DataError naming the file
// and the field. Required fields are checked first, in table order, then every field is read in
// table order: the table lists the fields in the order the reader checks them. The writer's key
// order is the JSON's own (sorted). Private to src/rundir.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "doc_lists.h"
#include "json_doc.h"
#include "llmprof/config/enums.h"
#include "llmprof/rundir/read.h"

namespace llmprof::rundir::detail {

// What the reader needs of a field.
enum class Presence {
  kOptional,  // may be absent
  kRequired,  // a field of the document's first version: absent is a DataError
  kLater,     // added after the first version: absent gets a note naming it (summary.json)
};

// One field of a JSON object of type Obj, written as J: Json (keys sorted) or, for a document
// written in its writer's order (the sweep's), nlohmann::ordered_json (keys in table order).
template <typename Obj, typename J = Json>
struct JsonField {
  std::string key;
  Presence presence = Presence::kOptional;
  // The value written at key; a discarded value (not_written()) leaves the key out.
  std::function<J(const Obj&)> write;
  // Reads the field at key (the table's, passed in: a reader names it only there).
  std::function<void(Obj&, ObjectReader&, DocContext&, const std::string& key)> read;
  // A nested object's or list's keys ("inner", list items' as "[].inner"); empty for a value.
  std::function<std::vector<std::string>()> nested;
};

template <typename Obj, typename J = Json>
using JsonFields = std::vector<JsonField<Obj, J>>;

// The value of a field written only with its figure, when it has none: the key is left out.
template <typename J = Json>
J not_written() {
  return J(J::value_t::discarded);
}

// ---------------------------------------------------------------------------------------------
// A member's value, written and read by its type. Read: absent or null leaves `out` as it is.

inline Json value_json(const std::string& v) { return v; }
inline Json value_json(bool v) { return v; }
inline Json value_json(int v) { return v; }
inline Json value_json(int64_t v) { return v; }
inline Json value_json(double v) { return v; }
inline Json value_json(const std::vector<std::string>& v) { return v; }
inline Json value_json(const std::vector<int64_t>& v) { return v; }
inline Json value_json(const std::vector<double>& v) { return v; }
inline Json value_json(const std::optional<llmprof::Summary>& v) { return stats_json(v); }
template <typename T>
Json value_json(const std::optional<T>& v) {
  return v ? value_json(*v) : Json(nullptr);
}

inline void read_value(ObjectReader& o, const std::string& key, std::string& out) {
  if (std::optional<std::string> v = o.text(key)) out = std::move(*v);
}
inline void read_value(ObjectReader& o, const std::string& key, bool& out) {
  if (std::optional<bool> v = o.boolean(key)) out = *v;
}
inline void read_value(ObjectReader& o, const std::string& key, int& out) {
  if (std::optional<int64_t> v = o.integer(key)) out = static_cast<int>(*v);
}
inline void read_value(ObjectReader& o, const std::string& key, int64_t& out) {
  if (std::optional<int64_t> v = o.integer(key)) out = *v;
}
inline void read_value(ObjectReader& o, const std::string& key, double& out) {
  if (std::optional<double> v = o.number(key)) out = *v;
}
inline void read_value(ObjectReader& o, const std::string& key, std::optional<std::string>& out) {
  out = o.text(key);
}
inline void read_value(ObjectReader& o, const std::string& key, std::optional<bool>& out) {
  out = o.boolean(key);
}
inline void read_value(ObjectReader& o, const std::string& key, std::optional<int64_t>& out) {
  out = o.integer(key);
}
inline void read_value(ObjectReader& o, const std::string& key, std::optional<int>& out) {
  const std::optional<int64_t> v = o.integer(key);
  out = v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}
inline void read_value(ObjectReader& o, const std::string& key, std::optional<double>& out) {
  out = o.number(key);
}
inline void read_value(ObjectReader& o,
                       const std::string& key,
                       std::optional<llmprof::Summary>& out) {
  out = o.stats(key);
}
inline void read_value(ObjectReader& o, const std::string& key, std::vector<std::string>& out) {
  out = string_list(o, key);
}
inline void read_value(ObjectReader& o, const std::string& key, std::vector<int64_t>& out) {
  out = value_list<int64_t>(o, key);
}
inline void read_value(ObjectReader& o, const std::string& key, std::vector<double>& out) {
  out = value_list<double>(o, key);
}

// ---------------------------------------------------------------------------------------------
// The object of a table, written and read.

// obj's fields as a JSON object.
template <typename Obj, typename J>
J write_object(const Obj& obj, const JsonFields<Obj, J>& fields) {
  J j = J::object();
  for (const JsonField<Obj, J>& f : fields) {
    J v = f.write(obj);
    if (!v.is_discarded()) j[f.key] = std::move(v);
  }
  return j;
}

// obj's fields from o: the required ones checked, then each read (a later one noted when absent).
// The caller keeps o's unknown keys (keep_unknown) when it has read what else it reads of o.
template <typename Obj, typename J>
void read_object(Obj& obj, ObjectReader& o, DocContext& ctx, const JsonFields<Obj, J>& fields) {
  for (const JsonField<Obj, J>& f : fields) {
    if (f.presence == Presence::kRequired) o.require(f.key);
  }
  for (const JsonField<Obj, J>& f : fields) {
    if (f.presence == Presence::kLater) o.later(f.key);
    f.read(obj, o, ctx, f.key);
  }
}

// Every key of a table, nested tables' as "outer.inner" (lists' as "outer[].inner"), in table
// order: what the writer writes and the reader reads.
template <typename Obj, typename J>
std::vector<std::string> field_keys(const JsonFields<Obj, J>& fields) {
  std::vector<std::string> out;
  for (const JsonField<Obj, J>& f : fields) {
    out.push_back(f.key);
    if (!f.nested) continue;
    for (const std::string& k : f.nested()) {
      out.push_back(f.key + (k.rfind("[]", 0) == 0 ? "" : ".") + k);
    }
  }
  return out;
}

// The keys of a JSON value as field_keys names them: objects' keys, the items of an array of
// objects as "[]" (merged), every level. What a writer wrote, to compare with its table.
inline std::vector<std::string> json_keys(const Json& v) {
  std::vector<std::string> out;
  if (!v.is_object()) return out;
  for (const auto& [key, value] : v.items()) {
    out.push_back(key);
    if (value.is_object()) {
      for (const std::string& k : json_keys(value)) out.push_back(key + "." + k);
    } else if (value.is_array() && !value.empty() && value.front().is_object()) {
      out.push_back(key + "[]");
      for (const Json& item : value) {
        for (const std::string& k : json_keys(item)) out.push_back(key + "[]." + k);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fields.

// The member at key, by its type. The helpers below take the written type J first (Json unless
// given: member<OJson>(...)); the object's type and the member's are deduced.
template <typename J = Json, typename Obj, typename M>
JsonField<Obj, J> member(std::string key, M Obj::*m, Presence p = Presence::kOptional) {
  return {key,
          p,
          [m](const Obj& o) { return J(value_json(o.*m)); },
          [m](Obj& o, ObjectReader& r, DocContext&, const std::string& key) {
            read_value(r, key, o.*m);
          },
          {}};
}

// An optional member written only when set (absent, not null, without it).
template <typename J = Json, typename Obj, typename T>
JsonField<Obj, J> member_if_set(std::string key,
                                std::optional<T> Obj::*m,
                                Presence p = Presence::kOptional) {
  JsonField<Obj, J> f = member<J>(std::move(key), m, p);
  f.write = [m](const Obj& o) { return (o.*m) ? J(value_json(*(o.*m))) : not_written<J>(); };
  return f;
}

// A text where "" means unknown: written as null.
template <typename J = Json, typename Obj>
JsonField<Obj, J> null_if_empty(std::string key,
                                std::string Obj::*m,
                                Presence p = Presence::kOptional) {
  JsonField<Obj, J> f = member<J>(std::move(key), m, p);
  f.write = [m](const Obj& o) { return J(detail::text_or_null(o.*m)); };
  return f;
}

// A text written only when not empty (absent, not "", without it).
template <typename J = Json, typename Obj>
JsonField<Obj, J> text_if_set(std::string key,
                              std::string Obj::*m,
                              Presence p = Presence::kOptional) {
  JsonField<Obj, J> f = member<J>(std::move(key), m, p);
  f.write = [m](const Obj& o) { return (o.*m).empty() ? not_written<J>() : J(o.*m); };
  return f;
}

// An enum written through config's name table and parsed back by it (an unknown name is a
// DataError naming the file and the field, dotted from the document's top: points.0.status).
template <typename J = Json, typename Obj, typename E>
JsonField<Obj, J> name_member(std::string key, E Obj::*m, Presence p = Presence::kOptional) {
  return {key,
          p,
          [m](const Obj& o) { return J(config::name(o.*m)); },
          [m](Obj& o, ObjectReader& r, DocContext&, const std::string& key) {
            if (const std::optional<std::string> v = r.text(key)) {
              o.*m = parse_name<E>(*v, r.file(), r.field(key));
            }
          },
          {}};
}

// T, in a parameter that takes no part in deducing the template's arguments.
template <typename T>
struct NotDeduced {
  using type = T;
};

// A field with a conversion of its own (Obj named: converted<Obj>(...), or <Obj, OJson>).
template <typename Obj, typename J = Json>
JsonField<Obj, J> converted(
    std::string key,
    Presence p,
    typename NotDeduced<std::function<J(const Obj&)>>::type write,
    std::function<void(Obj&, ObjectReader&, DocContext&, const std::string&)> read) {
  return {std::move(key), p, std::move(write), std::move(read), {}};
}

// A nested object always written (a struct member); read when present, its unknown keys kept.
template <typename Obj, typename Sub, typename J>
JsonField<Obj, J> object(std::string key,
                         Sub Obj::*m,
                         const JsonFields<Sub, J>& inner,
                         Presence p = Presence::kOptional) {
  return {key, p, [m, &inner](const Obj& o) { return write_object(o.*m, inner); },
          [m, &inner](Obj& o, ObjectReader& r, DocContext& ctx, const std::string& key) {
            if (std::optional<ObjectReader> sub = r.object(key)) {
              read_object(o.*m, *sub, ctx, inner);
              sub->keep_unknown();
            }
          },
          [&inner] { return field_keys(inner); }};
}

// An optional nested object: null without it.
template <typename Obj, typename Sub, typename J>
JsonField<Obj, J> section(std::string key,
                          std::optional<Sub> Obj::*m,
                          const JsonFields<Sub, J>& inner,
                          Presence p = Presence::kOptional) {
  return {
      key, p,
      [m, &inner](const Obj& o) { return (o.*m) ? write_object(*(o.*m), inner) : J(nullptr); },
      [m, &inner](Obj& o, ObjectReader& r, DocContext& ctx, const std::string& key) {
        o.*m = read_section<Sub>(r, key, [&](ObjectReader& sub) {
          Sub s{};
          read_object(s, sub, ctx, inner);
          return s;
        });
      },
      [&inner] { return field_keys(inner); }};
}

// An array of objects written through the item table.
template <typename Sub, typename J>
J write_object_list(const std::vector<Sub>& items, const JsonFields<Sub, J>& inner) {
  J a = J::array();
  for (const Sub& s : items) a.push_back(write_object(s, inner));
  return a;
}

// The array of objects at key read through the item table (object_list: absent or null is
// empty, each item's unknown keys kept).
template <typename Sub, typename J>
std::vector<Sub> read_object_list(ObjectReader& r,
                                  DocContext& ctx,
                                  const std::string& key,
                                  const JsonFields<Sub, J>& inner) {
  return object_list<Sub>(r, ctx, key, [&](ObjectReader& item) {
    Sub s{};
    read_object(s, item, ctx, inner);
    return s;
  });
}

// An optional nested object written only when set (absent, not null, without it).
template <typename Obj, typename Sub, typename J>
JsonField<Obj, J> section_if_set(std::string key,
                                 std::optional<Sub> Obj::*m,
                                 const JsonFields<Sub, J>& inner,
                                 Presence p = Presence::kOptional) {
  JsonField<Obj, J> f = section(std::move(key), m, inner, p);
  f.write = [m, &inner](const Obj& o) {
    return (o.*m) ? write_object(*(o.*m), inner) : not_written<J>();
  };
  return f;
}

// The keys of a list's items: "[]", then "[].inner" for each of the item table's.
template <typename Sub, typename J>
std::vector<std::string> item_keys(const JsonFields<Sub, J>& inner) {
  std::vector<std::string> out{"[]"};
  for (const std::string& k : field_keys(inner)) out.push_back("[]." + k);
  return out;
}

// An array of objects (object_list: absent or null is empty).
template <typename Obj, typename Sub, typename J>
JsonField<Obj, J> list(std::string key,
                       std::vector<Sub> Obj::*m,
                       const JsonFields<Sub, J>& inner,
                       Presence p = Presence::kOptional) {
  return {key, p, [m, &inner](const Obj& o) { return write_object_list(o.*m, inner); },
          [m, &inner](Obj& o, ObjectReader& r, DocContext& ctx, const std::string& key) {
            o.*m = read_object_list<Sub>(r, ctx, key, inner);
          },
          [&inner] { return item_keys(inner); }};
}

// An optional array of objects: null without it.
template <typename Obj, typename Sub, typename J>
JsonField<Obj, J> optional_list(std::string key,
                                std::optional<std::vector<Sub>> Obj::*m,
                                const JsonFields<Sub, J>& inner,
                                Presence p = Presence::kOptional) {
  return {
      key, p,
      [m, &inner](const Obj& o) { return (o.*m) ? write_object_list(*(o.*m), inner) : J(nullptr); },
      [m, &inner](Obj& o, ObjectReader& r, DocContext& ctx, const std::string& key) {
        const Json* v = r.raw(key);
        if (v == nullptr || v->is_null()) return;
        o.*m = read_object_list<Sub>(r, ctx, key, inner);
      },
      [&inner] { return item_keys(inner); }};
}

// ---------------------------------------------------------------------------------------------
// A whole document: its fields, then schema_version and the unknown keys kept.

// The document's JSON: the table's fields, schema_version, and the unknown keys put back.
template <typename Doc>
Json write_doc(const Doc& d, int version, const JsonFields<Doc>& fields) {
  Json j = write_object(d, fields);
  j["schema_version"] = version;
  put_unknown(j, d.unknown);
  return j;
}

// The document read from text: schema_version checked (a newer one refused), the table's fields,
// the unknown keys kept in d.unknown.
template <typename Doc>
Doc read_doc(const std::string& text,
             const std::string& file,
             int version,
             const JsonFields<Doc>& fields) {
  const Json j = parse_object(text, file);
  Doc d;
  DocContext ctx{file, &d.unknown, nullptr};
  ObjectReader doc(j, ctx, "");
  d.schema_version = check_version(doc, version);
  read_object(d, doc, ctx, fields);
  doc.keep_unknown();
  return d;
}

}  // namespace llmprof::rundir::detail
