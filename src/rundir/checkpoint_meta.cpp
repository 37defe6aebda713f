#include "llmprof/rundir/checkpoint_meta.h"

#include <fmt/format.h>

#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "read_util.h"

namespace llmprof::rundir {

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  const nlohmann::json doc = detail::read_json(path);
  const auto bad = [&](const std::string& field, const std::string& what) {
    return DataError(fmt::format("{}: {} {}", printable(path, 300), field, what));
  };
  if (!doc.is_object()) throw bad("the document", "is not a JSON object");
  const auto string_field = [&](const char* field, bool required) -> std::string {
    const auto it = doc.find(field);
    if (it == doc.end() || it->is_null()) {
      if (required) throw bad(field, "is missing");
      return {};
    }
    if (!it->is_string()) throw bad(field, "is not a string");
    return it->get<std::string>();
  };
  CheckpointMeta m;
  m.model_type = string_field("model_type", true);
  m.task = string_field("task", false);
  if (const auto it = doc.find("step"); it != doc.end() && !it->is_null()) {
    if (!it->is_number_integer()) throw bad("step", "is not an integer");
    m.step = it->get<int64_t>();
  }
  const auto tensors = doc.find("tensors");
  if (tensors == doc.end()) throw bad("tensors", "is missing");
  if (!tensors->is_array()) throw bad("tensors", "is not a list");
  for (size_t i = 0; i < tensors->size(); ++i) {
    const nlohmann::json& t = (*tensors)[i];
    const std::string field = fmt::format("tensors[{}].name", i);
    if (!t.is_object() || !t.contains("name")) throw bad(field, "is missing");
    if (!t["name"].is_string()) throw bad(field, "is not a string");
    m.tensors.push_back(t["name"].get<std::string>());
  }
  return m;
}

}  // namespace llmprof::rundir
