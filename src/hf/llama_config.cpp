// config.json of LlamaForCausalLM, Qwen2ForCausalLM and MistralForCausalLM: the keys of
// transformers' LlamaConfig, Qwen2Config and MistralConfig, with their defaults where the file may
// leave a key out, and rotary scaling read both as rope_scaling + rope_theta (transformers 4) and
// as rope_parameters (transformers 5).
#include "llama_config.h"

#include <fmt/format.h>

#include "llmprof/base/printable_json.h"
#include "llmprof/error.h"

namespace llmprof::hf::detail {

namespace {

using nlohmann::json;

constexpr const char* kLlamaNeeds =
    "a llama/qwen2/mistral config needs num_hidden_layers, num_attention_heads, hidden_size, "
    "intermediate_size, max_position_embeddings and vocab_size";

// rope_scaling (or rope_parameters) as an object; null, absent or type "default": none.
std::optional<RopeScaling> read_rope_scaling(const json& doc, const JsonFields& keys,
                                             const char* key) {
  if (!keys.has(key)) return std::nullopt;
  const json& r = doc[key];
  if (!r.is_object()) {
    keys.fail(key, fmt::format("expected an object or null, got {}", printable_json(r)));
  }
  const std::string file = fmt::format("{} ({})", keys.file(), key);
  const JsonFields f(r, file);
  RopeScaling s;
  s.type = f.string(f.has("rope_type") ? "rope_type" : "type", "");
  if (s.type.empty()) keys.fail(key, "has neither rope_type nor type");
  if (s.type == "default") return std::nullopt;
  s.factor = f.number("factor", 0.0);
  s.low_freq_factor = f.number("low_freq_factor", 0.0);
  s.high_freq_factor = f.number("high_freq_factor", 0.0);
  s.original_max_position_embeddings = f.integer("original_max_position_embeddings", 0);
  return s;
}

std::string raw_json(const json& doc, const JsonFields& keys, const char* key) {
  return keys.has(key) ? doc[key].dump() : std::string();
}

void require(bool ok, const std::string& where, const char* key, const std::string& what) {
  if (!ok) throw DataError(fmt::format("{}: key '{}': {}", where, key, what));
}

}  // namespace

LlamaFields read_llama(const json& doc, const JsonFields& keys, HfModelType type) {
  LlamaFields l;
  l.num_hidden_layers = keys.required_int("num_hidden_layers", kLlamaNeeds);
  l.num_attention_heads = keys.required_int("num_attention_heads", kLlamaNeeds);
  l.num_key_value_heads = keys.integer("num_key_value_heads", l.num_attention_heads);
  l.hidden_size = keys.required_int("hidden_size", kLlamaNeeds);
  l.intermediate_size = keys.required_int("intermediate_size", kLlamaNeeds);
  l.max_position_embeddings = keys.required_int("max_position_embeddings", kLlamaNeeds);
  l.head_dim = keys.optional_int("head_dim");
  l.rms_norm_eps = keys.number("rms_norm_eps", l.rms_norm_eps);
  l.hidden_act = keys.string("hidden_act", l.hidden_act);
  l.attention_dropout = keys.number("attention_dropout", l.attention_dropout);
  l.mlp_bias = keys.boolean("mlp_bias", false);
  // Qwen2Attention builds q/k/v with biases and o without, whatever the file says.
  l.attention_bias = type == HfModelType::kQwen2 ? true : keys.boolean("attention_bias", false);
  l.sliding_window = keys.optional_int("sliding_window");
  l.use_sliding_window = keys.boolean("use_sliding_window", type == HfModelType::kMistral);
  if (keys.has("rope_parameters")) {  // transformers 5: theta and scaling in one object
    l.rope_scaling = read_rope_scaling(doc, keys, "rope_parameters");  // checks it is an object
    const JsonFields p(doc["rope_parameters"], keys.file() + " (rope_parameters)");
    l.rope_theta = p.number("rope_theta", l.rope_theta);
  } else {
    l.rope_theta = keys.number("rope_theta", l.rope_theta);
    l.rope_scaling = read_rope_scaling(doc, keys, "rope_scaling");
  }
  l.bos_token_id_json = raw_json(doc, keys, "bos_token_id");
  l.eos_token_id_json = raw_json(doc, keys, "eos_token_id");
  l.pad_token_id_json = raw_json(doc, keys, "pad_token_id");
  return l;
}

void validate_llama(const HfModelConfig& c, const std::string& where) {
  const LlamaFields& l = c.llama;
  for (const auto& [key, value] : {std::pair{"num_hidden_layers", l.num_hidden_layers},
                                   {"num_attention_heads", l.num_attention_heads},
                                   {"num_key_value_heads", l.num_key_value_heads},
                                   {"hidden_size", l.hidden_size},
                                   {"intermediate_size", l.intermediate_size},
                                   {"max_position_embeddings", l.max_position_embeddings}}) {
    require(value >= 1, where, key, fmt::format("expected an integer >= 1, got {}", value));
  }
  require(l.num_attention_heads % l.num_key_value_heads == 0, where, "num_key_value_heads",
          fmt::format("num_attention_heads = {} is not divisible by num_key_value_heads = {} "
                      "(grouped-query attention shares each key/value head among a whole "
                      "number of query heads)",
                      l.num_attention_heads, l.num_key_value_heads));
  if (l.head_dim) {
    require(*l.head_dim >= 1 && *l.head_dim % 2 == 0, where, "head_dim",
            fmt::format("expected an even integer >= 2 (rotary pairs), got {}", *l.head_dim));
  } else {
    require(l.hidden_size % l.num_attention_heads == 0, where, "num_attention_heads",
            fmt::format("hidden_size = {} is not divisible by num_attention_heads = {} (and no "
                        "head_dim is given)",
                        l.hidden_size, l.num_attention_heads));
  }
  require(l.rms_norm_eps > 0.0, where, "rms_norm_eps",
          fmt::format("expected a number > 0, got {}", l.rms_norm_eps));
  require(l.rope_theta > 0.0, where, "rope_theta",
          fmt::format("expected a number > 0, got {}", l.rope_theta));
  if (l.sliding_window) {
    require(*l.sliding_window >= 1, where, "sliding_window",
            fmt::format("expected an integer >= 1 or null, got {}", *l.sliding_window));
  }
  require(l.attention_dropout >= 0.0 && l.attention_dropout <= 1.0, where, "attention_dropout",
          fmt::format("expected a dropout probability in [0, 1], got {}", l.attention_dropout));
}

void add_llama(const HfModelConfig& c, json& out) {
  const LlamaFields& l = c.llama;
  out["num_hidden_layers"] = l.num_hidden_layers;
  out["num_attention_heads"] = l.num_attention_heads;
  out["num_key_value_heads"] = l.num_key_value_heads;
  out["hidden_size"] = l.hidden_size;
  out["intermediate_size"] = l.intermediate_size;
  out["max_position_embeddings"] = l.max_position_embeddings;
  out["head_dim"] = l.head_dim_or_default();
  out["rms_norm_eps"] = l.rms_norm_eps;
  out["rope_theta"] = l.rope_theta;
  out["hidden_act"] = l.hidden_act;
  out["attention_dropout"] = l.attention_dropout;
  if (c.model_type != HfModelType::kQwen2) {
    out["attention_bias"] = l.attention_bias;
  }
  if (c.model_type == HfModelType::kLlama) out["mlp_bias"] = l.mlp_bias;
  if (c.model_type != HfModelType::kLlama) {
    out["sliding_window"] = l.sliding_window ? json(*l.sliding_window) : json(nullptr);
  }
  if (c.model_type == HfModelType::kQwen2) out["use_sliding_window"] = l.use_sliding_window;
  if (l.rope_scaling) {
    const RopeScaling& s = *l.rope_scaling;
    json r = {{"rope_type", s.type}, {"factor", s.factor}};
    if (s.type == "llama3") {
      r["low_freq_factor"] = s.low_freq_factor;
      r["high_freq_factor"] = s.high_freq_factor;
      r["original_max_position_embeddings"] = s.original_max_position_embeddings;
    }
    out["rope_scaling"] = r;
  } else {
    out["rope_scaling"] = nullptr;
  }
  for (const auto& [key, text] : {std::pair{"bos_token_id", &l.bos_token_id_json},
                                  {"eos_token_id", &l.eos_token_id_json},
                                  {"pad_token_id", &l.pad_token_id_json}}) {
    if (!text->empty()) out[key] = json::parse(*text);
  }
}

}  // namespace llmprof::hf::detail
