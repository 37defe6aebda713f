#include "json_fields.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"

namespace llmprof::hf::detail {

using nlohmann::json;

json read_json_object(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::exception& e) {
    throw DataError(fmt::format("'{}' is not valid JSON: {}", path, printable(e.what(), 200)));
  }
  if (!doc.is_object()) {
    throw DataError(fmt::format("'{}' holds a JSON {}, expected an object", path, doc.type_name()));
  }
  return doc;
}

void JsonFields::fail(const char* key, const std::string& what) const {
  throw DataError(fmt::format("{}: key '{}': {}", file_, key, what));
}

const json* JsonFields::get(const char* key) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

void JsonFields::note_default(const char* key) const {
  if (defaulted_ != nullptr) defaulted_->push_back(key);
}

bool JsonFields::has(const char* key) const { return get(key) != nullptr; }

int64_t JsonFields::required_int(const char* key, const std::string& needed) const {
  if (get(key) == nullptr) {
    throw DataError(fmt::format("{}: no key '{}' ({})", file_, key, needed));
  }
  return *optional_int(key);
}

std::optional<int64_t> JsonFields::optional_int(const char* key) const {
  const json* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX)) {
    fail(key, fmt::format("expected an integer, got {}", printable_json(*v)));
  }
  return v->get<int64_t>();
}

int64_t JsonFields::integer(const char* key, int64_t fallback) const {
  if (std::optional<int64_t> v = optional_int(key)) return *v;
  note_default(key);
  return fallback;
}

const json* JsonFields::typed(const char* key,
                              bool (json::*is_type)() const noexcept,
                              const char* expected) const {
  const json* v = get(key);
  if (v == nullptr) {
    note_default(key);
  } else if (!(v->*is_type)()) {
    fail(key, fmt::format("expected {}, got {}", expected, printable_json(*v)));
  }
  return v;
}

double JsonFields::number(const char* key, double fallback) const {
  const json* v = typed(key, &json::is_number, "a number");
  return v ? v->get<double>() : fallback;
}

bool JsonFields::boolean(const char* key, bool fallback) const {
  const json* v = typed(key, &json::is_boolean, "true or false");
  return v ? v->get<bool>() : fallback;
}

std::string JsonFields::string(const char* key, const std::string& fallback) const {
  const json* v = typed(key, &json::is_string, "a string");
  return v ? v->get<std::string>() : fallback;
}

std::vector<std::string> JsonFields::strings(const char* key) const {
  std::vector<std::string> out;
  const json* v = get(key);
  if (v == nullptr) return out;
  if (!v->is_array())
    fail(key, fmt::format("expected a list of strings, got {}", printable_json(*v)));
  for (const json& s : *v) {
    if (!s.is_string())
      fail(key, fmt::format("expected a list of strings, got {}", printable_json(*v)));
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace llmprof::hf::detail
