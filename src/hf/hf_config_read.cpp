// config.json of GPT-2 and DistilBERT checkpoints to HfModelConfig, and the checks every config
// passes, read or about to be written.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <set>

#include "json_fields.h"
#include "llama_config.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"
#include "llmprof/hf/files.h"
#include "llmprof/hf/hf_config.h"

namespace llmprof::hf {

namespace {

using nlohmann::json;

constexpr const char* kGpt2Needs =
    "a gpt2 config needs n_layer, n_head, n_embd, n_positions or "
    "n_ctx, and vocab_size";
constexpr const char* kSupported = "gpt2, distilbert, llama, qwen2, mistral";
constexpr const char* kDistilBertNeeds =
    "a distilbert config needs n_layers, n_heads, dim, "
    "hidden_dim, max_position_embeddings and vocab_size";

Gpt2Fields read_gpt2(const detail::JsonFields& keys) {
  Gpt2Fields g;
  g.n_layer = keys.required_int("n_layer", kGpt2Needs);
  g.n_head = keys.required_int("n_head", kGpt2Needs);
  g.n_embd = keys.required_int("n_embd", kGpt2Needs);
  g.n_positions = keys.required_int(keys.has("n_positions") ? "n_positions" : "n_ctx", kGpt2Needs);
  g.n_inner = keys.optional_int("n_inner");
  g.layer_norm_epsilon = keys.number("layer_norm_epsilon", g.layer_norm_epsilon);
  g.activation_function = keys.string("activation_function", g.activation_function);
  g.resid_pdrop = keys.number("resid_pdrop", g.resid_pdrop);
  g.embd_pdrop = keys.number("embd_pdrop", g.embd_pdrop);
  g.attn_pdrop = keys.number("attn_pdrop", g.attn_pdrop);
  g.bos_token_id = keys.optional_int("bos_token_id");
  g.eos_token_id = keys.optional_int("eos_token_id");
  return g;
}

DistilBertFields read_distilbert(const detail::JsonFields& keys) {
  DistilBertFields d;
  d.n_layers = keys.required_int("n_layers", kDistilBertNeeds);
  d.n_heads = keys.required_int("n_heads", kDistilBertNeeds);
  d.dim = keys.required_int("dim", kDistilBertNeeds);
  d.hidden_dim = keys.required_int("hidden_dim", kDistilBertNeeds);
  d.max_position_embeddings = keys.required_int("max_position_embeddings", kDistilBertNeeds);
  d.activation = keys.string("activation", d.activation);
  d.dropout = keys.number("dropout", d.dropout);
  d.attention_dropout = keys.number("attention_dropout", d.attention_dropout);
  d.sinusoidal_pos_embds = keys.boolean("sinusoidal_pos_embds", d.sinusoidal_pos_embds);
  d.pad_token_id = keys.integer("pad_token_id", d.pad_token_id);
  d.qa_dropout = keys.number("qa_dropout", d.qa_dropout);
  d.seq_classif_dropout = keys.number("seq_classif_dropout", d.seq_classif_dropout);
  return d;
}

// id2label ({"0": "NEGATIVE", "1": "POSITIVE"}: JSON keys are strings) to labels by id; the ids
// must be 0..n-1. Without it, num_labels n gives transformers' LABEL_0..LABEL_{n-1}. With both,
// transformers keeps id2label (warning when num_labels disagrees); so do we.
std::vector<std::string> read_labels(const json& doc, const detail::JsonFields& keys) {
  std::optional<int64_t> num_labels = keys.optional_int("num_labels");
  if (num_labels && *num_labels < 1) {
    keys.fail("num_labels", fmt::format("expected an integer >= 1, got {}", *num_labels));
  }
  std::vector<std::string> labels;
  if (!keys.has("id2label")) {
    for (int64_t i = 0; num_labels && i < *num_labels; ++i)
      labels.push_back(fmt::format("LABEL_{}", i));
    return labels;
  }
  const json& map = doc["id2label"];
  if (!map.is_object() || map.empty()) {
    keys.fail("id2label",
              fmt::format("expected an object of id: label, got {}", printable_json(map)));
  }
  labels.resize(map.size());
  std::set<size_t> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string& id = it.key();
    char* end = nullptr;
    const unsigned long long i = std::strtoull(id.c_str(), &end, 10);
    if (id.empty() || *end != '\0' || id[0] == '-' || i >= map.size() || !it.value().is_string()) {
      keys.fail("id2label",
                fmt::format("expected ids 0..{} mapped to label strings, got \"{}\": {}",
                            map.size() - 1, id, it.value().dump()));
    }
    if (!seen.insert(i).second) keys.fail("id2label", fmt::format("id {} given twice", i));
    labels[i] = it.value().get<std::string>();
  }
  if (num_labels && *num_labels != static_cast<int64_t>(labels.size())) {
    spdlog::warn(
        "{}: num_labels {} disagrees with id2label's {} labels: id2label wins, as in "
        "transformers",
        keys.file(), *num_labels, labels.size());
  }
  return labels;
}

void require_positive(const std::string& where, const char* key, int64_t value) {
  if (value < 1) {
    throw DataError(
        fmt::format("{}: key '{}': expected an integer >= 1, got {}", where, key, value));
  }
}

void require_probability(const std::string& where, const char* key, double value) {
  if (!(value >= 0.0 && value <= 1.0)) {
    throw DataError(fmt::format("{}: key '{}': expected a dropout probability in [0, 1], got {}",
                                where, key, value));
  }
}

void require_divides(const std::string& where,
                     const char* heads_key,
                     int64_t heads,
                     const char* width_key,
                     int64_t width) {
  if (width % heads != 0) {
    throw DataError(fmt::format("{}: key '{}': {} = {} is not divisible by {} = {}", where,
                                heads_key, width_key, width, heads_key, heads));
  }
}

}  // namespace

const char* model_type_name(HfModelType type) {
  switch (type) {
    case HfModelType::kGpt2:
      return "gpt2";
    case HfModelType::kDistilBert:
      return "distilbert";
    case HfModelType::kLlama:
      return "llama";
    case HfModelType::kQwen2:
      return "qwen2";
    case HfModelType::kMistral:
      return "mistral";
  }
  return "?";
}

void validate_hf_config(const HfModelConfig& c, const std::string& where) {
  require_positive(where, "vocab_size", c.vocab_size);
  if (c.llama_family()) {
    detail::validate_llama(c, where);
  } else if (c.model_type == HfModelType::kGpt2) {
    const Gpt2Fields& g = c.gpt2;
    require_positive(where, "n_layer", g.n_layer);
    require_positive(where, "n_head", g.n_head);
    require_positive(where, "n_embd", g.n_embd);
    require_positive(where, "n_positions", g.n_positions);
    if (g.n_inner) require_positive(where, "n_inner", *g.n_inner);
    require_divides(where, "n_head", g.n_head, "n_embd", g.n_embd);
    if (!(g.layer_norm_epsilon > 0.0)) {
      throw DataError(fmt::format("{}: key 'layer_norm_epsilon': expected a number > 0, got {}",
                                  where, g.layer_norm_epsilon));
    }
    require_probability(where, "resid_pdrop", g.resid_pdrop);
    require_probability(where, "embd_pdrop", g.embd_pdrop);
    require_probability(where, "attn_pdrop", g.attn_pdrop);
  } else {
    const DistilBertFields& d = c.distilbert;
    require_positive(where, "n_layers", d.n_layers);
    require_positive(where, "n_heads", d.n_heads);
    require_positive(where, "dim", d.dim);
    require_positive(where, "hidden_dim", d.hidden_dim);
    require_positive(where, "max_position_embeddings", d.max_position_embeddings);
    require_divides(where, "n_heads", d.n_heads, "dim", d.dim);
    if (d.pad_token_id < 0 || d.pad_token_id >= c.vocab_size) {
      throw DataError(fmt::format("{}: key 'pad_token_id': {} is not a token id (vocab_size {})",
                                  where, d.pad_token_id, c.vocab_size));
    }
    require_probability(where, "dropout", d.dropout);
    require_probability(where, "attention_dropout", d.attention_dropout);
    require_probability(where, "qa_dropout", d.qa_dropout);
    require_probability(where, "seq_classif_dropout", d.seq_classif_dropout);
  }
}

HfModelConfig read_hf_config(const std::string& folder) {
  return read_hf_config_file(in_folder(folder, kConfigJson));
}

HfModelConfig read_hf_config_file(const std::string& path) {
  HfModelConfig c;
  c.file = path;
  const json doc = detail::read_json_object(c.file);
  const detail::JsonFields keys(doc, c.file, &c.defaulted);

  if (!keys.has("model_type")) {
    throw DataError(fmt::format("{}: no key 'model_type' (supported: {})", c.file, kSupported));
  }
  const std::string type = keys.string("model_type", "");
  bool known = false;
  for (HfModelType t : {HfModelType::kGpt2, HfModelType::kDistilBert, HfModelType::kLlama,
                        HfModelType::kQwen2, HfModelType::kMistral}) {
    if (type == model_type_name(t)) c.model_type = t, known = true;
  }
  if (!known) {
    keys.fail("model_type", fmt::format("\"{}\" is not supported (supported: {})", type, kSupported));
  }
  c.architectures = keys.strings("architectures");
  c.vocab_size = keys.required_int("vocab_size", c.llama_family() ? "a llama/qwen2/mistral config"
                                                 : c.model_type == HfModelType::kGpt2
                                                     ? kGpt2Needs
                                                     : kDistilBertNeeds);
  // GPT2Config and DistilBertConfig tie by default; LlamaConfig, Qwen2Config and MistralConfig
  // do not.
  c.tie_word_embeddings = keys.boolean("tie_word_embeddings", !c.llama_family());
  c.initializer_range = keys.number("initializer_range", c.initializer_range);
  // transformers 4.56 and later write "dtype" where older ones wrote "torch_dtype".
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (c.torch_dtype.empty() && keys.has(key)) c.torch_dtype = keys.string(key, "");
  }
  c.id2label = read_labels(doc, keys);
  if (c.llama_family()) {
    c.llama = detail::read_llama(doc, keys, c.model_type);
  } else if (c.model_type == HfModelType::kGpt2) {
    c.gpt2 = read_gpt2(keys);
  } else {
    c.distilbert = read_distilbert(keys);
  }
  validate_hf_config(c, c.file);
  return c;
}

}  // namespace llmprof::hf
