// checkpoint.json's one writer and one reader (include/llmprof/rundir/checkpoint_meta.h), through
// the JSON document layer: fields this version does not know are kept for a rewrite.
#include "llmprof/rundir/checkpoint_meta.h"

#include <fmt/format.h>

#include "json_doc.h"
#include "llmprof/base/printable.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {

using detail::Json;
using detail::ObjectReader;

bool plain_name(const std::string& s) {
  return !s.empty() && s.find('/') == std::string::npos && s[0] != '.';
}

std::string required_text(ObjectReader& o, const std::string& key) {
  o.require(key);
  std::optional<std::string> v = o.text(key);
  if (!v) o.fail(key, "a string");
  return *v;
}

// tokenizer: {type, sha256, vocab_size, lower_case, dir, files, source[, config_keys]}.
CheckpointTokenizer read_tokenizer(ObjectReader& t) {
  CheckpointTokenizer r;
  r.type = required_text(t, "type");
  r.sha256 = required_text(t, "sha256");
  r.dir = required_text(t, "dir");
  r.source = t.text("source").value_or("");
  if (r.sha256.size() != 64 || r.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
    t.fail("sha256", "64 lowercase hex digits");
  }
  if (!plain_name(r.dir)) t.fail("dir", "a folder name inside the checkpoint");
  if (const std::optional<int64_t> v = t.integer("vocab_size")) r.vocab_size = *v;
  if (const std::optional<bool> v = t.boolean("lower_case")) r.lower_case = *v;
  const Json* files = t.raw("files");
  if (files == nullptr || !files->is_array()) {
    if (files == nullptr) t.require("files");
    t.fail("files", "a list of file names");
  }
  for (const Json& f : *files) {
    if (!f.is_string() || !plain_name(f.get<std::string>())) t.fail("files", "a list of file names");
    r.files.push_back(f.get<std::string>());
  }
  if (const Json* keys = t.raw("config_keys"); keys != nullptr && !keys->is_null()) {
    if (!keys->is_array()) t.fail("config_keys", "a list of {key, value}");
    for (const Json& k : *keys) {
      if (!k.is_object() || !k.contains("key") || !k.contains("value") || !k["key"].is_string() ||
          !k["value"].is_string()) {
        t.fail("config_keys", "a list of {key, value} strings");
      }
      r.config_keys.emplace_back(k["key"].get<std::string>(), k["value"].get<std::string>());
    }
  }
  return r;
}

// tensors: [{name, shape}], each name a string.
std::vector<CheckpointTensor> read_tensors(ObjectReader& doc, detail::DocContext& ctx) {
  doc.require("tensors");
  const Json* tensors = doc.raw("tensors");
  if (!tensors->is_array()) doc.fail("tensors", "a list");
  std::vector<CheckpointTensor> out;
  for (size_t i = 0; i < tensors->size(); ++i) {
    const Json& t = (*tensors)[i];
    const std::string field = fmt::format("tensors[{}].name", i);
    if (!t.is_object() || !t.contains("name")) {
      throw DataError(fmt::format("{}: {} is missing", ctx.file, field));
    }
    if (!t["name"].is_string()) {
      throw DataError(fmt::format("{}: {} is {}, not a string", ctx.file, field,
                                  printable_json(t["name"])));
    }
    ObjectReader o(t, ctx, fmt::format("/tensors/{}", i));
    CheckpointTensor ct{*o.text("name"), {}};
    if (const Json* shape = o.raw("shape"); shape != nullptr && !shape->is_null()) {
      if (!shape->is_array()) o.fail("shape", "a list of integers");
      for (const Json& d : *shape) {
        if (!d.is_number_integer()) o.fail("shape", "a list of integers");
        ct.shape.push_back(d.get<int64_t>());
      }
    }
    o.keep_unknown();
    out.push_back(std::move(ct));
  }
  return out;
}

CheckpointModelShape read_model(ObjectReader& o) {
  CheckpointModelShape m;
  for (auto [key, field] : {std::pair{"n_layer", &m.n_layer}, {"n_head", &m.n_head},
                            {"n_embd", &m.n_embd}, {"block_size", &m.block_size},
                            {"ffn_dim", &m.ffn_dim}, {"max_positions", &m.max_positions},
                            {"num_labels", &m.num_labels}}) {
    *field = o.integer(key).value_or(0);
  }
  return m;
}

void read_tokenizer_section(ObjectReader& doc, CheckpointMeta& m) {
  std::optional<ObjectReader> t = doc.object("tokenizer");
  if (!t) return;
  if (t->has("sha256")) {
    m.tokenizer = read_tokenizer(*t);
  } else {
    m.tokenizer_ref = CheckpointTokenizerRef{t->text("type").value_or(""),
                                             t->text("vocab_path").value_or("")};
  }
  t->keep_unknown();
}

Json tensors_json(const std::vector<CheckpointTensor>& tensors) {
  Json out = Json::array();
  for (const CheckpointTensor& t : tensors) out.push_back({{"name", t.name}, {"shape", t.shape}});
  return out;
}

}  // namespace

std::vector<std::string> CheckpointMeta::tensor_names() const {
  std::vector<std::string> names;
  for (const CheckpointTensor& t : tensors) names.push_back(t.name);
  return names;
}

std::optional<int64_t> CheckpointMeta::rows_of(const std::vector<std::string>& names) const {
  for (const CheckpointTensor& t : tensors) {
    for (const std::string& n : names) {
      if (t.name == n && !t.shape.empty()) return t.shape[0];
    }
  }
  return std::nullopt;
}

CheckpointMeta parse_checkpoint_meta(const std::string& text, const std::string& file) {
  const Json doc_json = detail::parse_object(text, file);
  CheckpointMeta m;
  detail::DocContext ctx{file, &m.unknown, nullptr};
  ObjectReader doc(doc_json, ctx, "");
  // Tests and tools write checkpoint.json without one; a newer one is refused.
  if (doc.has("schema_version")) m.schema_version = detail::check_version(doc, kCheckpointSchemaVersion);
  m.model_type = required_text(doc, "model_type");
  m.task = doc.text("task").value_or("");
  m.step = doc.integer("step").value_or(0);
  if (std::optional<ObjectReader> o = doc.object("model")) {
    m.model = read_model(*o);
    o->keep_unknown();
  }
  m.tensors = read_tensors(doc, ctx);
  read_tokenizer_section(doc, m);
  m.hf_config = doc.text("hf_config").value_or("");
  if (m.hf_config.find('/') != std::string::npos) doc.fail("hf_config", "a file name");
  doc.keep_unknown();
  return m;
}

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  return parse_checkpoint_meta(detail::read_text(path), printable(path, 300));
}

std::string checkpoint_meta_text(const CheckpointMeta& m) {
  Json j;
  j["schema_version"] = kCheckpointSchemaVersion;
  j["model_type"] = m.model_type;
  if (!m.task.empty()) j["task"] = m.task;
  j["step"] = m.step;
  if (const auto& s = m.model) {
    j["model"] = {{"n_layer", s->n_layer}, {"n_head", s->n_head}, {"n_embd", s->n_embd},
                  {"block_size", s->block_size}, {"ffn_dim", s->ffn_dim},
                  {"max_positions", s->max_positions}, {"num_labels", s->num_labels}};
  }
  j["tensors"] = tensors_json(m.tensors);
  if (const auto& t = m.tokenizer) {
    j["tokenizer"] = {{"type", t->type},       {"sha256", t->sha256}, {"vocab_size", t->vocab_size},
                      {"lower_case", t->lower_case}, {"dir", t->dir}, {"files", t->files},
                      {"source", t->source}};
    if (!t->config_keys.empty()) {
      Json keys = Json::array();
      for (const auto& [k, v] : t->config_keys) keys.push_back({{"key", k}, {"value", v}});
      j["tokenizer"]["config_keys"] = std::move(keys);
    }
  } else if (const auto& r = m.tokenizer_ref) {
    j["tokenizer"] = {{"type", r->type}, {"vocab_path", r->vocab_path}};
  }
  if (!m.hf_config.empty()) j["hf_config"] = m.hf_config;
  detail::put_unknown(j, m.unknown);
  return j.dump(2) + "\n";
}

void write_checkpoint_meta(const std::string& path, const CheckpointMeta& m) {
  output::write_file_atomic(path, checkpoint_meta_text(m));
}

std::string checkpoint_meta_fields_doc() {
  CheckpointMeta full;
  full.model_type = full.task = "text";
  full.model = CheckpointModelShape{};
  full.tensors = {{"text", {1}}};
  full.tokenizer =
      CheckpointTokenizer{"text", "text", 1, true, "text", {"text"}, "text", {{"text", "text"}}};
  full.hf_config = "text";
  CheckpointMeta none;
  const std::string heading = fmt::format(
      "# checkpoint.json fields (schema_version {})\n\n"
      "Generated from `rundir::CheckpointMeta` (include/llmprof/rundir/checkpoint_meta.h) through "
      "its writer; `tests/rundir/checkpoint_meta_test.cpp` checks that this file matches. Keys are "
      "written in this (sorted) order. `tokenizer` is shown as a run with a tokenizer's files "
      "writes it; a checkpoint of a tokenizer without files holds `tokenizer.type` and "
      "`tokenizer.vocab_path` instead. Read: `model_type` and `tensors[].name` are required.\n\n",
      kCheckpointSchemaVersion);
  const Json none_json = Json::parse(checkpoint_meta_text(none));
  return detail::field_table_page(heading, Json::parse(checkpoint_meta_text(full)), none_json);
}

}  // namespace llmprof::rundir
