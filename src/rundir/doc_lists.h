// Arrays inside a typed document, read through the document layer (json_doc.h): an array of
// objects each read by a function, and an array of strings or numbers. Absent or null is empty;
// anything else than the array expected is a DataError naming the file and the field. Private to
// src/rundir.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "json_doc.h"

namespace llmprof::rundir::detail {

// Each object of the array at key, read by f(ObjectReader&) -> T; its unknown keys are kept.
template <typename T, typename F>
std::vector<T> object_list(ObjectReader& doc, DocContext& ctx, const std::string& key, F f) {
  std::vector<T> out;
  const Json* a = doc.raw(key);
  if (a == nullptr || a->is_null()) return out;
  if (!a->is_array()) doc.fail(key, "an array of objects");
  for (size_t i = 0; i < a->size(); ++i) {
    if (!(*a)[i].is_object()) doc.fail(key, "an array of objects");
    ObjectReader o((*a)[i], ctx, fmt::format("{}/{}/{}", doc.pointer(), key, i));
    out.push_back(f(o));
    o.keep_unknown();
  }
  return out;
}

// The array at key of T = std::string, int64_t or double.
template <typename T>
std::vector<T> value_list(ObjectReader& o, const std::string& key) {
  constexpr const char* what = std::is_same_v<T, std::string> ? "an array of strings"
                               : std::is_same_v<T, int64_t>   ? "an array of integers"
                                                              : "an array of numbers";
  std::vector<T> out;
  const Json* v = o.raw(key);
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) o.fail(key, what);
  for (const Json& x : *v) {
    const bool ok = std::is_same_v<T, std::string> ? x.is_string()
                    : std::is_same_v<T, int64_t>   ? x.is_number_integer()
                                                   : x.is_number();
    if (!ok) o.fail(key, what);
    out.push_back(x.get<T>());
  }
  return out;
}

}  // namespace llmprof::rundir::detail
