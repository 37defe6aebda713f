// checkpoint.json's one writer and one reader (include/llmprof/rundir/checkpoint_meta.h), through
// the JSON document layer: fields this version does not know are kept for a rewrite.
#include "llmprof/rundir/checkpoint_meta.h"

#include <fmt/format.h>

#include <algorithm>

#include "doc_tables.h"
#include "json_fields.h"
#include "llmprof/base/printable.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {

using detail::DocContext;
using detail::Json;
using detail::JsonField;
using detail::JsonFields;
using detail::member;
using detail::ObjectReader;
using detail::Presence;

bool plain_name(const std::string& s) {
  return !s.empty() && s.find('/') == std::string::npos && s[0] != '.';
}

// A text that must be there and a string (null is not).
template <typename Obj>
JsonField<Obj> required_text(std::string key, std::string Obj::*m) {
  JsonField<Obj> f = member(key, m, Presence::kRequired);
  f.read = [m](Obj& o, ObjectReader& r, DocContext&, const std::string& key) {
    std::optional<std::string> v = r.text(key);
    if (!v) r.fail(key, "a string");
    o.*m = *v;
  };
  return f;
}

// The tokenizer's files: a list of plain file names in its folder.
JsonField<CheckpointTokenizer> files_field() {
  JsonField<CheckpointTokenizer> f =
      member("files", &CheckpointTokenizer::files, Presence::kRequired);
  f.read = [](CheckpointTokenizer& r, ObjectReader& t, DocContext&, const std::string& key) {
    const Json* files = t.raw(key);
    if (files == nullptr || !files->is_array()) t.fail(key, "a list of file names");
    for (const Json& f : *files) {
      if (!f.is_string() || !plain_name(f.get<std::string>())) {
        t.fail(key, "a list of file names");
      }
      r.files.push_back(f.get<std::string>());
    }
  };
  return f;
}

// The data.* keys of the training config, as (key, value) pairs; written only when there are any.
JsonField<CheckpointTokenizer> config_keys_field() {
  static constexpr const char* kKey = "key";
  static constexpr const char* kValue = "value";
  return detail::converted<CheckpointTokenizer>(
      "config_keys", Presence::kOptional,
      [](const CheckpointTokenizer& t) {
        if (t.config_keys.empty()) return detail::not_written();
        Json keys = Json::array();
        for (const auto& [k, v] : t.config_keys) keys.push_back({{kKey, k}, {kValue, v}});
        return keys;
      },
      [](CheckpointTokenizer& r, ObjectReader& t, DocContext&, const std::string& key) {
        const Json* keys = t.raw(key);
        if (keys == nullptr || keys->is_null()) return;
        if (!keys->is_array()) t.fail(key, "a list of {key, value}");
        for (const Json& k : *keys) {
          if (!k.is_object() || !k.contains(kKey) || !k.contains(kValue) || !k[kKey].is_string() ||
              !k[kValue].is_string()) {
            t.fail(key, "a list of {key, value} strings");
          }
          r.config_keys.emplace_back(k[kKey].get<std::string>(), k[kValue].get<std::string>());
        }
      });
}

// The tokenizer's hash and folder: checked beside their reading, and the hash tells the two forms
// of a tokenizer apart.
constexpr const char* kSha256 = "sha256";
constexpr const char* kDir = "dir";

// The fields, each key once: the writer's and the reader's (in the order the reader checks them).
// tokenizer: {type, sha256, vocab_size, lower_case, dir, files, source[, config_keys]}.
const JsonFields<CheckpointTokenizer>& tokenizer_fields() {
  using T = CheckpointTokenizer;
  static const JsonFields<T> f = [] {
    JsonFields<T> t = {required_text("type", &T::type), required_text(kSha256, &T::sha256),
                       required_text(kDir, &T::dir), member("source", &T::source)};
    // Checked once all three texts are read.
    t.back().read = [](T& r, ObjectReader& o, DocContext&, const std::string& key) {
      r.source = o.text(key).value_or("");
      if (r.sha256.size() != 64 ||
          r.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
        o.fail(kSha256, "64 lowercase hex digits");
      }
      if (!plain_name(r.dir)) o.fail(kDir, "a folder name inside the checkpoint");
    };
    t.push_back(member("vocab_size", &T::vocab_size));
    t.push_back(member("lower_case", &T::lower_case));
    t.push_back(files_field());
    t.push_back(config_keys_field());
    return t;
  }();
  return f;
}

// A tokenizer without its files: its type and the vocabulary it was read from.
const JsonFields<CheckpointTokenizerRef>& tokenizer_ref_fields() {
  static const JsonFields<CheckpointTokenizerRef> f = {
      member("type", &CheckpointTokenizerRef::type),
      member("vocab_path", &CheckpointTokenizerRef::vocab_path)};
  return f;
}

// tokenizer: with its files (it has sha256), or a reference to one.
JsonField<CheckpointMeta> tokenizer_field() {
  JsonField<CheckpointMeta> f = detail::converted<CheckpointMeta>(
      "tokenizer", Presence::kOptional,
      [](const CheckpointMeta& m) {
        if (m.tokenizer) return detail::write_object(*m.tokenizer, tokenizer_fields());
        if (m.tokenizer_ref) return detail::write_object(*m.tokenizer_ref, tokenizer_ref_fields());
        return detail::not_written();
      },
      [](CheckpointMeta& m, ObjectReader& doc, DocContext& ctx, const std::string& key) {
        std::optional<ObjectReader> t = doc.object(key);
        if (!t) return;
        if (t->has(kSha256)) {
          detail::read_object(m.tokenizer.emplace(), *t, ctx, tokenizer_fields());
        } else {
          detail::read_object(m.tokenizer_ref.emplace(), *t, ctx, tokenizer_ref_fields());
        }
        t->keep_unknown();
      });
  f.nested = [] {
    std::vector<std::string> keys = detail::field_keys(tokenizer_fields());
    for (const std::string& k : detail::field_keys(tokenizer_ref_fields())) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    return keys;
  };
  return f;
}

const JsonFields<CheckpointModelShape>& model_fields() {
  using S = CheckpointModelShape;
  static const JsonFields<S> f = {
      member("n_layer", &S::n_layer),      member("n_head", &S::n_head),
      member("n_embd", &S::n_embd),        member("block_size", &S::block_size),
      member("ffn_dim", &S::ffn_dim),      member("max_positions", &S::max_positions),
      member("num_labels", &S::num_labels)};
  return f;
}

constexpr const char* kTensorName = "name";

// A tensor's shape: a list of integers (null: not written).
const JsonFields<CheckpointTensor>& tensor_fields() {
  static const JsonFields<CheckpointTensor> f = {
      member(kTensorName, &CheckpointTensor::name),
      detail::converted<CheckpointTensor>(
          "shape", Presence::kOptional, [](const CheckpointTensor& t) { return Json(t.shape); },
          [](CheckpointTensor& ct, ObjectReader& o, DocContext&, const std::string& key) {
            if (const Json* shape = o.raw(key); shape != nullptr && !shape->is_null()) {
              if (!shape->is_array()) o.fail(key, "a list of integers");
              for (const Json& d : *shape) {
                if (!d.is_number_integer()) o.fail(key, "a list of integers");
                ct.shape.push_back(d.get<int64_t>());
              }
            }
          })};
  return f;
}

// tensors: [{name, shape}], each name a string.
JsonField<CheckpointMeta> tensors_field() {
  JsonField<CheckpointMeta> f =
      detail::list("tensors", &CheckpointMeta::tensors, tensor_fields(), Presence::kRequired);
  f.read = [](CheckpointMeta& m, ObjectReader& doc, DocContext& ctx, const std::string& key) {
    const Json* tensors = doc.raw(key);
    if (!tensors->is_array()) doc.fail(key, "a list");
    for (size_t i = 0; i < tensors->size(); ++i) {
      const Json& t = (*tensors)[i];
      const std::string field = fmt::format("{}[{}].{}", key, i, kTensorName);
      if (!t.is_object() || !t.contains(kTensorName)) {
        throw DataError(fmt::format("{}: {} is missing", ctx.file, field));
      }
      if (!t[kTensorName].is_string()) {
        throw DataError(fmt::format("{}: {} is {}, not a string", ctx.file, field,
                                    printable_json(t[kTensorName])));
      }
      ObjectReader o(t, ctx, fmt::format("/{}/{}", key, i));
      detail::read_object(m.tensors.emplace_back(), o, ctx, tensor_fields());
      o.keep_unknown();
    }
  };
  return f;
}

// The Hugging Face config.json beside the weights: a file name; written only with one.
JsonField<CheckpointMeta> hf_config_field() {
  JsonField<CheckpointMeta> f = detail::text_if_set("hf_config", &CheckpointMeta::hf_config);
  f.read = [](CheckpointMeta& m, ObjectReader& doc, DocContext&, const std::string& key) {
    m.hf_config = doc.text(key).value_or("");
    if (m.hf_config.find('/') != std::string::npos) doc.fail(key, "a file name");
  };
  return f;
}

}  // namespace

namespace detail {
const JsonFields<CheckpointMeta>& checkpoint_meta_fields() {
  static const JsonFields<CheckpointMeta> f = {
      required_text("model_type", &CheckpointMeta::model_type),
      text_if_set("task", &CheckpointMeta::task),
      member("step", &CheckpointMeta::step),
      section_if_set("model", &CheckpointMeta::model, model_fields()),
      tensors_field(),
      tokenizer_field(),
      hf_config_field()};
  return f;
}
}  // namespace detail

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
  detail::read_object(m, doc, ctx, detail::checkpoint_meta_fields());
  doc.keep_unknown();
  return m;
}

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  return parse_checkpoint_meta(detail::read_text(path), printable(path, 300));
}

std::string checkpoint_meta_text(const CheckpointMeta& m) {
  return detail::write_doc(m, kCheckpointSchemaVersion, detail::checkpoint_meta_fields()).dump(2) +
         "\n";
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
