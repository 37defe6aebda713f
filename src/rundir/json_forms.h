// Field tables (json_fields.h) for objects whose JSON is not one key per member: a field written
// only in one form of its object, a constant written again, a member struct's fields written into
// the object itself (always, or when an optional one is set), a group of the object's own fields
// under a key of its own, and tables joined. Each key is still written once, in a table. Private
// to src/rundir.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "json_fields.h"

namespace llmprof::rundir::detail {

// f, written only when when(obj) holds (the key left out otherwise); read as f reads.
template <typename Obj, typename J, typename When>
JsonField<Obj, J> only_when(JsonField<Obj, J> f, When when) {
  f.write = [w = std::move(f.write), when](const Obj& o) {
    return when(o) ? w(o) : not_written<J>();
  };
  return f;
}

// A fixed value written again (a constant sentence, a flag always true): read only to check its
// type, never kept (fixed<Obj>(...), or <Obj, OJson>).
template <typename Obj, typename J = Json>
JsonField<Obj, J> fixed(std::string key, const Json& value) {
  return {std::move(key),
          Presence::kOptional,
          [value](const Obj&) { return J(value); },
          [value](Obj&, ObjectReader& r, DocContext&, const std::string& key) {
            if (value.is_string()) {
              r.text(key);
            } else if (value.is_boolean()) {
              r.boolean(key);
            } else if (value.is_number_integer()) {
              r.integer(key);
            } else if (value.is_number()) {
              r.number(key);
            } else {
              r.raw(key);
            }
          },
          {}};
}

// The field f of a member struct, written into the object itself (no key of its own).
template <typename Obj, typename Sub, typename J>
JsonField<Obj, J> of_member(Sub Obj::*m, const JsonField<Sub, J>& f) {
  return {f.key, f.presence, [m, w = f.write](const Obj& o) { return w(o.*m); },
          [m, r = f.read](Obj& o, ObjectReader& rd, DocContext& ctx, const std::string& key) {
            r(o.*m, rd, ctx, key);
          },
          f.nested};
}

// Every field of a member struct, written into the object itself.
template <typename Obj, typename Sub, typename J>
JsonFields<Obj, J> embedded(Sub Obj::*m, const JsonFields<Sub, J>& inner) {
  JsonFields<Obj, J> out;
  for (const JsonField<Sub, J>& f : inner) out.push_back(of_member(m, f));
  return out;
}

// The fields of an optional member struct, written into the object itself from the Sub that
// written(obj) points to (none written for nullptr); read, the member made, when the object holds
// inner's first key.
template <typename Obj, typename Sub, typename J, typename Written>
JsonFields<Obj, J> inlined(std::optional<Sub> Obj::*m,
                           const JsonFields<Sub, J>& inner,
                           Written written) {
  JsonFields<Obj, J> out;
  for (size_t i = 0; i < inner.size(); ++i) {
    const JsonField<Sub, J>& f = inner[i];
    out.push_back({f.key, f.presence,
                   [written, w = f.write](const Obj& o) {
                     const Sub* s = written(o);
                     return s != nullptr ? w(*s) : not_written<J>();
                   },
                   [m, r = f.read, makes = i == 0](Obj& o, ObjectReader& rd, DocContext& ctx,
                                                   const std::string& key) {
                     if (makes && rd.has(key)) (o.*m).emplace();
                     if (o.*m) r(*(o.*m), rd, ctx, key);
                   },
                   f.nested});
  }
  return out;
}

// The same, written when the member is set.
template <typename Obj, typename Sub, typename J>
JsonFields<Obj, J> inlined(std::optional<Sub> Obj::*m, const JsonFields<Sub, J>& inner) {
  return inlined(m, inner, [m](const Obj& o) -> const Sub* { return (o.*m) ? &*(o.*m) : nullptr; });
}

// An object at key holding fields of the object itself (summary.json's "memory"): always
// written; read when present, its unknown keys kept.
template <typename Obj, typename J>
JsonField<Obj, J> group(std::string key,
                        const JsonFields<Obj, J>& inner,
                        Presence p = Presence::kOptional) {
  return {std::move(key), p, [&inner](const Obj& o) { return write_object(o, inner); },
          [&inner](Obj& o, ObjectReader& r, DocContext& ctx, const std::string& key) {
            if (std::optional<ObjectReader> sub = r.object(key)) {
              read_object(o, *sub, ctx, inner);
              sub->keep_unknown();
            }
          },
          [&inner] { return field_keys(inner); }};
}

// Tables joined in order, one table (joined<Obj>({...}), or <Obj, OJson>).
template <typename Obj, typename J = Json>
JsonFields<Obj, J> joined(std::initializer_list<JsonFields<Obj, J>> parts) {
  JsonFields<Obj, J> out;
  for (const JsonFields<Obj, J>& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The keys of several tables, each once, in order: a field whose object takes one of several
// forms, each with its table.
template <typename... Tables>
std::vector<std::string> keys_of(const Tables&... tables) {
  std::vector<std::string> out;
  for (const std::vector<std::string>& keys : {field_keys(tables)...}) {
    for (const std::string& k : keys) {
      bool seen = false;
      for (const std::string& o : out) seen = seen || o == k;
      if (!seen) out.push_back(k);
    }
  }
  return out;
}

}  // namespace llmprof::rundir::detail
