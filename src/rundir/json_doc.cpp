#include "json_doc.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "read_util.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"

namespace llmprof::rundir::detail {

namespace {

// A value from the document in an error message: escaped, cut, and never dumped past 32 levels
// of nesting (dump() recurses once per level: 100,000 '[' would overflow the stack).
std::string shown(const Json& v) { return printable_json(v, 60); }

// How deep a value kept as text (dump()) to be written back may nest.
constexpr int kMaxKeptDepth = 64;

// "/timing/step_ms" -> "timing.step_ms".
std::string dotted(const std::string& pointer) {
  std::string out;
  for (char c : pointer) out += c == '/' ? '.' : c;
  return out.empty() ? out : out.substr(1);
}

std::string escape_pointer(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

ObjectReader::ObjectReader(const Json& object, DocContext& ctx, std::string pointer)
    : object_(object), ctx_(&ctx), pointer_(std::move(pointer)) {}

std::string ObjectReader::field(const std::string& key) const {
  const std::string base = dotted(pointer_);
  return base.empty() ? key : base + "." + key;
}

void ObjectReader::fail(const std::string& key, const std::string& expected) const {
  throw DataError(fmt::format("{}: {} is {}, not {}", ctx_->file, field(key),
                              shown(object_.at(key)), expected));
}

bool ObjectReader::has(const std::string& key) const { return object_.contains(key); }

const Json* ObjectReader::get(const std::string& key) {
  read_.insert(key);
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> ObjectReader::number(const std::string& key) {
  const Json* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) fail(key, "a number");
  return v->get<double>();
}

std::optional<int64_t> ObjectReader::integer(const std::string& key) {
  const Json* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_integer()) return v->get<int64_t>();
  // A whole number written as a float (1e9) reads as the integer it is.
  const double d = v->is_number() ? v->get<double>() : 0.5;
  if (d != std::floor(d) || std::abs(d) > 9.2e18) fail(key, "an integer");
  return static_cast<int64_t>(d);
}

std::optional<std::string> ObjectReader::text(const std::string& key) {
  const Json* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) fail(key, "a string");
  return v->get<std::string>();
}

std::optional<bool> ObjectReader::boolean(const std::string& key) {
  const Json* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) fail(key, "true or false");
  return v->get<bool>();
}

std::optional<ObjectReader> ObjectReader::object(const std::string& key) {
  const Json* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) fail(key, "an object");
  return ObjectReader(*v, *ctx_, pointer_ + "/" + escape_pointer(key));
}

std::vector<ObjectReader> ObjectReader::objects(const std::string& key) {
  std::vector<ObjectReader> out;
  const Json* v = get(key);
  if (v == nullptr) return out;
  if (!v->is_array()) fail(key, "an array of objects");
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_object()) fail(key, "an array of objects");
    out.emplace_back((*v)[i], *ctx_, fmt::format("{}/{}/{}", pointer_, escape_pointer(key), i));
  }
  return out;
}

const Json* ObjectReader::raw(const std::string& key) {
  read_.insert(key);
  const auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

std::optional<llmprof::Summary> ObjectReader::stats(const std::string& key) {
  std::optional<ObjectReader> o = object(key);
  if (!o) return std::nullopt;
  // A statistic without its median is unknown as a whole.
  const std::optional<double> median = o->number("median");
  if (!median) return std::nullopt;
  llmprof::Summary s;
  s.n = o->integer("n").value_or(0);
  s.mean = o->number("mean").value_or(0);
  s.median = *median;
  s.p10 = o->number("p10").value_or(0);
  s.p90 = o->number("p90").value_or(0);
  s.min = o->number("min").value_or(0);
  s.max = o->number("max").value_or(0);
  s.stddev = o->number("stddev");
  s.cv = o->number("cv");
  o->keep_unknown();
  return s;
}

void ObjectReader::require(const std::string& key) const {
  if (!object_.contains(key)) {
    throw DataError(fmt::format("{}: {} is missing (a field of the document's first version)",
                                ctx_->file, field(key)));
  }
}

void ObjectReader::later(const std::string& key) {
  if (!object_.contains(key) && ctx_->notes != nullptr) {
    ctx_->notes->push_back(fmt::format("{}: no {} (written before the field was added): null",
                                       ctx_->file, field(key)));
  }
}

void ObjectReader::keep_unknown() {
  if (ctx_->unknown == nullptr) return;
  for (const auto& [key, value] : object_.items()) {
    if (read_.count(key) == 0) (*ctx_->unknown)[pointer_ + "/" + escape_pointer(key)] = kept(key);
  }
}

std::string ObjectReader::kept(const std::string& key) const {
  const Json& value = object_.at(key);
  if (llmprof::detail::json_deeper_than(value, kMaxKeptDepth)) {
    throw DataError(fmt::format("{}: {} nests arrays or objects over {} levels deep; no "
                                "llmprof writes that", ctx_->file, printable(field(key)),
                                kMaxKeptDepth));
  }
  return value.dump();
}

Json parse_object(const std::string& text, const std::string& file) {
  Json j = parse_json(text, file);
  if (!j.is_object()) {
    const std::string type = j.type_name();
    const char* article = type == "array" || type == "object" ? "an" : "a";
    throw DataError(fmt::format("{}: not a JSON object ({} {})", file, article, type));
  }
  return j;
}

int check_version(ObjectReader& doc, int known) {
  doc.require("schema_version");
  const std::optional<int64_t> v = doc.integer("schema_version");
  if (!v) doc.fail("schema_version", "an integer");
  if (*v > known) {
    throw DataError(fmt::format("{}: schema_version {} is newer than this llmprof reads ({}): "
                                "it was written by a newer llmprof; read it with that version",
                                doc.file(), *v, known));
  }
  return static_cast<int>(*v);
}

Json stats_json(const std::optional<llmprof::Summary>& s) {
  if (!s) return nullptr;
  Json j = {{"n", s->n},     {"mean", s->mean}, {"median", s->median}, {"p10", s->p10},
            {"p90", s->p90}, {"min", s->min},   {"max", s->max}};
  j["stddev"] = opt(s->stddev);
  j["cv"] = opt(s->cv);
  return j;
}

void put_unknown(Json& doc, const std::map<std::string, std::string>& unknown) {
  for (const auto& [pointer, text] : unknown) {
    doc[Json::json_pointer(pointer)] = Json::parse(text);
  }
}

std::vector<std::string> string_list(ObjectReader& o, const std::string& key) {
  std::vector<std::string> out;
  const Json* v = o.raw(key);
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) o.fail(key, "an array of strings");
  for (const Json& s : *v) {
    if (!s.is_string()) o.fail(key, "an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace llmprof::rundir::detail
