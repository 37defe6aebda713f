// HfModelConfig to config.json (and tokenizer_config.json), for export: the keys transformers'
// GPT2Config / DistilBertConfig take, so that from_pretrained on the folder builds the same
// model. Written as save_pretrained
// writes (json.dumps(indent=2, sort_keys=True) plus a newline); keys that only one transformers
// version knows are left out, and so is transformers_version.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "llama_config.h"
#include "llmprof/hf/files.h"
#include "llmprof/hf/hf_config.h"
#include "llmprof/output/run_dir.h"

namespace llmprof::hf {

namespace {

using nlohmann::json;

json optional_int(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

void add_gpt2(const Gpt2Fields& g, json& out) {
  out["n_layer"] = g.n_layer;
  out["n_head"] = g.n_head;
  out["n_embd"] = g.n_embd;
  out["n_positions"] = g.n_positions;
  out["n_ctx"] = g.n_positions;  // the older name, still in gpt2's own config.json
  out["n_inner"] = optional_int(g.n_inner);
  out["layer_norm_epsilon"] = g.layer_norm_epsilon;
  out["activation_function"] = g.activation_function;
  out["resid_pdrop"] = g.resid_pdrop;
  out["embd_pdrop"] = g.embd_pdrop;
  out["attn_pdrop"] = g.attn_pdrop;
  if (g.bos_token_id) out["bos_token_id"] = *g.bos_token_id;
  if (g.eos_token_id) out["eos_token_id"] = *g.eos_token_id;
}

void add_distilbert(const DistilBertFields& d, json& out) {
  out["n_layers"] = d.n_layers;
  out["n_heads"] = d.n_heads;
  out["dim"] = d.dim;
  out["hidden_dim"] = d.hidden_dim;
  out["max_position_embeddings"] = d.max_position_embeddings;
  out["activation"] = d.activation;
  out["dropout"] = d.dropout;
  out["attention_dropout"] = d.attention_dropout;
  out["sinusoidal_pos_embds"] = d.sinusoidal_pos_embds;
  out["pad_token_id"] = d.pad_token_id;
  out["qa_dropout"] = d.qa_dropout;
  out["seq_classif_dropout"] = d.seq_classif_dropout;
}

}  // namespace

std::string hf_config_json(const HfModelConfig& c) {
  json out = json::object();  // std::map underneath: keys come out sorted
  out["model_type"] = model_type_name(c.model_type);
  if (!c.architectures.empty()) out["architectures"] = c.architectures;
  out["vocab_size"] = c.vocab_size;
  out["tie_word_embeddings"] = c.tie_word_embeddings;
  out["initializer_range"] = c.initializer_range;
  out["torch_dtype"] = c.torch_dtype.empty() ? "float32" : c.torch_dtype;
  if (!c.id2label.empty()) {
    json id2label = json::object(), label2id = json::object();
    for (size_t i = 0; i < c.id2label.size(); ++i) {
      id2label[std::to_string(i)] = c.id2label[i];
      label2id[c.id2label[i]] = i;
    }
    out["id2label"] = id2label;
    out["label2id"] = label2id;
  }
  if (c.llama_family()) {
    detail::add_llama(c, out);
  } else if (c.model_type == HfModelType::kGpt2) {
    add_gpt2(c.gpt2, out);
  } else {
    add_distilbert(c.distilbert, out);
  }
  return out.dump(2) + "\n";
}

std::string tokenizer_config_json(const HfTokenizerConfig& c) {
  json out = {{"model_max_length", c.model_max_length}, {"tokenizer_class", c.tokenizer_class}};
  if (c.do_lower_case) out["do_lower_case"] = *c.do_lower_case;
  return out.dump(2) + "\n";
}

void write_tokenizer_config(const std::string& folder, const HfTokenizerConfig& config) {
  output::write_file_atomic(in_folder(folder, kTokenizerConfigJson),
                            tokenizer_config_json(config));
}

void write_hf_config(const std::string& folder, const HfModelConfig& config) {
  const std::string path = in_folder(folder, kConfigJson);
  validate_hf_config(config, fmt::format("config to write to {}", path));
  output::write_file_atomic(path, hf_config_json(config));
}

}  // namespace llmprof::hf
