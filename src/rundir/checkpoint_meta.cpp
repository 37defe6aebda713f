#include "llmprof/rundir/checkpoint_meta.h"

#include <fmt/format.h>

#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {

// tokenizer: {type, sha256, vocab_size, lower_case, dir, files, source}; nullopt without a sha256
// (a checkpoint saved before tokenizers were recorded held {type, vocab_path}).
template <typename Bad>
std::optional<CheckpointTokenizer> read_tokenizer(const nlohmann::json& doc, const Bad& bad) {
  const auto it = doc.find("tokenizer");
  if (it == doc.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) throw bad("tokenizer", "is not an object");
  const nlohmann::json& t = *it;
  if (!t.contains("sha256")) return std::nullopt;
  const auto text = [&](const char* field) -> std::string {
    const auto f = t.find(field);
    if (f == t.end() || !f->is_string()) {
      throw bad(std::string("tokenizer.") + field, f == t.end() ? "is missing" : "is not a string");
    }
    return f->get<std::string>();
  };
  CheckpointTokenizer r;
  r.type = text("type");
  r.sha256 = text("sha256");
  r.dir = text("dir");
  if (t.contains("source") && t["source"].is_string()) r.source = t["source"];
  if (r.sha256.size() != 64 || r.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw bad("tokenizer.sha256", "is not 64 lowercase hex digits");
  }
  if (r.dir.empty() || r.dir.find('/') != std::string::npos || r.dir[0] == '.') {
    throw bad("tokenizer.dir", "is not a folder name inside the checkpoint");
  }
  if (const auto v = t.find("vocab_size"); v != t.end()) {
    if (!v->is_number_integer()) throw bad("tokenizer.vocab_size", "is not an integer");
    r.vocab_size = v->get<int64_t>();
  }
  if (const auto v = t.find("lower_case"); v != t.end()) {
    if (!v->is_boolean()) throw bad("tokenizer.lower_case", "is not true or false");
    r.lower_case = v->get<bool>();
  }
  const auto files = t.find("files");
  if (files == t.end() || !files->is_array()) throw bad("tokenizer.files", "is not a list");
  for (const nlohmann::json& f : *files) {
    if (!f.is_string() || f.get<std::string>().empty() ||
        f.get<std::string>().find('/') != std::string::npos || f.get<std::string>()[0] == '.') {
      throw bad("tokenizer.files", "holds something other than file names");
    }
    r.files.push_back(f.get<std::string>());
  }
  return r;
}

}  // namespace

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
  m.tokenizer = read_tokenizer(doc, bad);
  m.hf_config = string_field("hf_config", false);
  if (m.hf_config.find('/') != std::string::npos) throw bad("hf_config", "is not a file name");
  return m;
}

}  // namespace llmprof::rundir
