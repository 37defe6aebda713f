// Hugging Face folders in, the config half: adopting a folder's model and tokenizer into a config
// (its weights: hf_load.cpp; the name table: hf_names.cpp; export: hf_export.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "hf_errors.h"
#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/config/config.h"
#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/hf/files.h"
#include "llmprof/hf/hf_config.h"

namespace fs = std::filesystem;

namespace llmprof::checkpoint {

using detail::key_error;

namespace {

// The (key, value) pairs a folder fixes, in the order they are reported.
using Wanted = std::vector<std::pair<std::string, std::string>>;

// A number as the config schema prints it back (get_value), so that 1e-05 and 0.00001 compare.
std::string normalized(const config::Config& cfg, const std::string& key, const std::string& v) {
  config::Config probe = cfg;
  config::apply_override(probe, key + "=" + v);
  return config::get_value(probe, key);
}

// What llmprof's Llama cannot build from a Llama-family config.json: a ConfigError saying why.
void check_llama_buildable(const hf::HfModelConfig& hc, const config::Config& cfg,
                           const std::string& key) {
  const hf::LlamaFields& l = hc.llama;
  const std::string type = hf::model_type_name(hc.model_type);
  if (l.hidden_act != "silu") {
    throw key_error(cfg, key, fmt::format("{}: hidden_act {} is not supported (silu, SwiGLU)",
                                          hc.file, l.hidden_act));
  }
  if (l.mlp_bias) {
    throw key_error(cfg, key, fmt::format("{}: mlp_bias=true is not supported (llmprof's Llama "
                                          "MLP has no biases)",
                                          hc.file));
  }
  if (l.attention_bias && hc.model_type != hf::HfModelType::kQwen2) {
    throw key_error(cfg, key, fmt::format("{}: attention_bias=true ({} puts biases on q, k, v and "
                                          "o) is not supported: llmprof's Llama has Qwen2's q/k/v "
                                          "biases only",
                                          hc.file, type));
  }
  if (l.rope_scaling && l.rope_scaling->type != "llama3") {
    throw key_error(cfg, key, fmt::format("{}: rope_scaling type '{}' is not implemented (llama3 "
                                          "is, and none)",
                                          hc.file, l.rope_scaling->type));
  }
}

// The (key, value) pairs a Llama-family folder fixes.
Wanted llama_wanted(const hf::HfModelConfig& hc, const hf::HfTokenizerFiles& tok) {
  const hf::LlamaFields& l = hc.llama;
  const bool qwen2 = hc.model_type == hf::HfModelType::kQwen2;
  const int64_t head_dim = l.head_dim_or_default();
  Wanted w = {{"model.type", "llama"},
              {"model.n_layer", std::to_string(l.num_hidden_layers)},
              {"model.n_head", std::to_string(l.num_attention_heads)},
              {"model.n_kv_head", std::to_string(l.num_key_value_heads)},
              {"model.n_embd", std::to_string(l.hidden_size)},
              {"model.head_dim", head_dim * l.num_attention_heads == l.hidden_size
                                     ? std::string("0")
                                     : std::to_string(head_dim)},
              {"model.intermediate_size", std::to_string(l.intermediate_size)},
              {"model.max_positions", std::to_string(l.max_position_embeddings)},
              {"model.vocab_size", std::to_string(hc.vocab_size)},
              {"model.rope_theta", fmt::format("{}", l.rope_theta)},
              {"model.rms_norm_eps", fmt::format("{}", l.rms_norm_eps)},
              {"model.tie_embeddings", hc.tie_word_embeddings ? "true" : "false"},
              {"model.attention_bias", l.attention_bias ? "true" : "false"},
              {"model.sliding_window", std::to_string(l.active_window(qwen2).value_or(0))}};
  if (l.rope_scaling) {
    const hf::RopeScaling& r = *l.rope_scaling;
    w.insert(w.end(), {{"model.rope_scaling.type", r.type},
                       {"model.rope_scaling.factor", fmt::format("{}", r.factor)},
                       {"model.rope_scaling.low_freq_factor", fmt::format("{}", r.low_freq_factor)},
                       {"model.rope_scaling.high_freq_factor",
                        fmt::format("{}", r.high_freq_factor)},
                       {"model.rope_scaling.original_max_position_embeddings",
                        std::to_string(r.original_max_position_embeddings)}});
  } else {
    w.emplace_back("model.rope_scaling.type", "none");
  }
  w.insert(w.end(), {{"data.tokenizer", "hf"}, {"data.vocab_path", tok.tokenizer_json}});
  return w;
}

// Mistral's sliding window (and Qwen2's when switched on) is not built: the model attends over
// the whole block, which is the same only when the window holds the block.
void check_window(const hf::HfModelConfig& hc, const config::Config& cfg) {
  const auto window = hc.llama.active_window(hc.model_type == hf::HfModelType::kQwen2);
  if (window && *window < cfg.model.block_size) {
    throw ConfigError(fmt::format("model.block_size: {} is more than the sliding window {} of {} "
                                  "(sliding_window); llmprof attends over the whole block: give "
                                  "model.block_size <= {}",
                                  cfg.model.block_size, *window, hc.file, *window),
                      cfg.source_file, "model.block_size");
  }
}

}  // namespace

bool is_hf_folder(const std::string& path) {
  if (path.empty()) return false;
  std::error_code ec;
  const fs::path dir(path);
  if (!fs::is_regular_file(dir / hf::kConfigJson, ec)) return false;
  if (fs::is_regular_file(dir / hf::kSafetensors, ec) ||
      fs::is_regular_file(dir / hf::kPytorchBin, ec)) {
    return true;
  }
  return hf::config_names_model_type(path);
}

config::DataConfig hf_tokenizer_data(const std::string& folder) {
  const hf::HfModelConfig hc = hf::read_hf_config(folder);
  const hf::HfTokenizerFiles tok = hf::find_tokenizer_files(folder, hc.model_type);
  config::DataConfig d;
  if (hc.llama_family()) {
    d.tokenizer = config::TokenizerKind::kHf;
    d.vocab_path = tok.tokenizer_json;
  } else if (hc.model_type == hf::HfModelType::kGpt2) {
    d.tokenizer = config::TokenizerKind::kGpt2;
    d.vocab_path = tok.vocab_json;
    d.merges_path = tok.merges_txt;
  } else {
    d.tokenizer = config::TokenizerKind::kWordpiece;
    d.vocab_path = tok.vocab_txt;
    d.lower_case = tok.do_lower_case;
  }
  return d;
}

namespace {

// The tokenizer keys the user gave, as given: the folder's tokenizer replaces them, and the
// checkpoint records them so the same config evaluates the run (take_checkpoint_tokenizer).
void record_given_tokenizer_keys(config::Config& cfg) {
  cfg.given_tokenizer_keys.clear();
  for (const char* k :
       {"data.tokenizer", "data.vocab_path", "data.merges_path", "data.lower_case"}) {
    for (const auto& given : cfg.given_keys) {
      if (given.first == k) cfg.given_tokenizer_keys.emplace_back(k, config::get_value(cfg, k));
    }
  }
}

}  // namespace

namespace {

// The (key, value) pairs a GPT-2 folder fixes; a ConfigError for one llmprof cannot build.
Wanted gpt2_wanted(const hf::HfModelConfig& hc,
                   const hf::HfTokenizerFiles& tok,
                   const config::Config& cfg,
                   const std::string& key) {
  const hf::Gpt2Fields& g = hc.gpt2;
  if (g.n_inner && *g.n_inner != 4 * g.n_embd) {
    throw key_error(cfg, key,
                    fmt::format("{}: n_inner {} is not 4 x n_embd ({}); llmprof's "
                                "GPT MLP is 4 x n_embd wide",
                                hc.file, *g.n_inner, 4 * g.n_embd));
  }
  if (g.activation_function != "gelu_new" && g.activation_function != "gelu") {
    throw key_error(cfg, key,
                    fmt::format("{}: activation_function {} is not supported (gelu_new "
                                "or gelu)",
                                hc.file, g.activation_function));
  }
  if (g.layer_norm_epsilon != 1e-5) {
    throw key_error(cfg, key,
                    fmt::format("{}: layer_norm_epsilon {} differs from llmprof's "
                                "GPT (1e-5)",
                                hc.file, g.layer_norm_epsilon));
  }
  return {{"model.type", "gpt"},
          {"model.n_layer", std::to_string(g.n_layer)},
          {"model.n_head", std::to_string(g.n_head)},
          {"model.n_embd", std::to_string(g.n_embd)},
          {"model.max_positions", std::to_string(g.n_positions)},
          {"model.vocab_size", std::to_string(hc.vocab_size)},
          {"model.bias", "true"},
          {"model.activation", g.activation_function == "gelu_new" ? "gelu_tanh" : "gelu"},
          {"data.tokenizer", "gpt2"},
          {"data.vocab_path", tok.vocab_json},
          {"data.merges_path", tok.merges_txt}};
}

// The (key, value) pairs a DistilBERT folder fixes (its labels for a classify run of a
// DistilBertForSequenceClassification); a ConfigError for one llmprof cannot build.
Wanted distilbert_wanted(const hf::HfModelConfig& hc,
                         const hf::HfTokenizerFiles& tok,
                         const config::Config& cfg,
                         const std::string& key) {
  const hf::DistilBertFields& d = hc.distilbert;
  if (d.activation != "gelu") {
    throw key_error(
        cfg, key, fmt::format("{}: activation {} is not supported (gelu)", hc.file, d.activation));
  }
  if (d.sinusoidal_pos_embds) {
    throw key_error(cfg, key,
                    fmt::format("{}: sinusoidal_pos_embds=true is not supported "
                                "(learned positions only)",
                                hc.file));
  }
  Wanted wanted = {{"model.type", "distilbert"},
                   {"model.n_layer", std::to_string(d.n_layers)},
                   {"model.n_head", std::to_string(d.n_heads)},
                   {"model.n_embd", std::to_string(d.dim)},
                   {"model.ffn_dim", std::to_string(d.hidden_dim)},
                   {"model.max_positions", std::to_string(d.max_position_embeddings)},
                   {"model.vocab_size", std::to_string(hc.vocab_size)},
                   {"data.tokenizer", "wordpiece"},
                   {"data.vocab_path", tok.vocab_txt},
                   {"data.lower_case", tok.do_lower_case ? "true" : "false"}};
  const bool classifier =
      std::find(hc.architectures.begin(), hc.architectures.end(),
                "DistilBertForSequenceClassification") != hc.architectures.end();
  if (classifier && cfg.train.task == config::TaskKind::kClassify) {
    wanted.emplace_back("model.num_labels", std::to_string(hc.num_labels()));
  }
  return wanted;
}

// The pairs the folder fixes, after checking that llmprof builds its model.
Wanted folder_wanted(const hf::HfModelConfig& hc,
                     const hf::HfTokenizerFiles& tok,
                     const config::Config& cfg,
                     const std::string& key) {
  if (hc.llama_family()) check_llama_buildable(hc, cfg, key);
  if (!hc.tie_word_embeddings && !hc.llama_family()) {
    throw key_error(cfg, key, fmt::format("{} has tie_word_embeddings=false; llmprof's models "
                                          "tie the LM head to the token embedding",
                                          hc.file));
  }
  if (hc.llama_family()) return llama_wanted(hc, tok);
  if (hc.model_type == hf::HfModelType::kGpt2) return gpt2_wanted(hc, tok, cfg, key);
  return distilbert_wanted(hc, tok, cfg, key);
}

// Sets each wanted key in cfg. The model's shape is the checkpoint's: a shape the user gave that
// differs is an error. The tokenizer files are the folder's, whatever data.* said (a config
// runnable without weights): one note per such key. A key the user never set held a default, not
// a choice: it is replaced without a word.
std::vector<std::string> apply_wanted(config::Config& cfg,
                                      const Wanted& wanted,
                                      const std::string& folder,
                                      bool normalize) {
  std::vector<std::string> notes;
  for (auto [k, theirs] : wanted) {
    const std::string ours = config::get_value(cfg, k);
    if (normalize) theirs = normalized(cfg, k, theirs);
    if (ours == theirs) continue;
    const bool shape = k.rfind("model.", 0) == 0;
    for (const auto& [given, where] : cfg.given_keys) {
      if (given != k) continue;
      if (shape) {
        throw ConfigError(fmt::format("{}: {} sets {}={} but the checkpoint {} has {}={}; the "
                                      "model and tokenizer come from the checkpoint: drop the key "
                                      "or give another checkpoint",
                                      k, where, k, ours, folder, k, theirs),
                          cfg.source_file, k);
      }
      notes.push_back(fmt::format("{}={} from {} (in place of {}, {})", k, theirs, folder,
                                  ours.empty() ? "\"\"" : ours, where));
    }
    config::apply_override(cfg, k + "=" + theirs);
  }
  return notes;
}

// A block size left at its default is no choice either: it shrinks to the folder's positions
// (a note says so). One the user gave beyond them is a ConfigError.
void fit_block_size(config::Config& cfg,
                    const hf::HfModelConfig& hc,
                    const std::string& folder,
                    std::vector<std::string>& notes) {
  const bool block_given =
      std::any_of(cfg.given_keys.begin(), cfg.given_keys.end(),
                  [](const auto& given) { return given.first == "model.block_size"; });
  if (!block_given && cfg.model.block_size > cfg.model.max_positions) {
    notes.push_back(fmt::format("model.block_size={} from {} (its positions; the default {} is "
                                "more)",
                                cfg.model.max_positions, folder, cfg.model.block_size));
    config::apply_override(cfg, fmt::format("model.block_size={}", cfg.model.max_positions));
  }
  if (cfg.model.block_size > cfg.model.max_positions) {
    throw ConfigError(fmt::format("model.block_size: {} exceeds the checkpoint's {} positions ({})",
                                  cfg.model.block_size, cfg.model.max_positions, hc.file),
                      cfg.source_file, "model.block_size");
  }
}

}  // namespace

std::vector<std::string> adopt_hf_model(config::Config& cfg,
                                        const std::string& folder,
                                        const std::string& key) {
  hf::HfModelConfig hc;
  hf::HfTokenizerFiles tok;
  try {
    hc = hf::read_hf_config(folder);
    tok = hf::find_tokenizer_files(folder, hc.model_type);
  } catch (const DataError& e) {
    throw key_error(cfg, key, e.what());
  }
  const Wanted wanted = folder_wanted(hc, tok, cfg, key);
  record_given_tokenizer_keys(cfg);
  std::vector<std::string> notes = apply_wanted(cfg, wanted, folder, hc.llama_family());
  fit_block_size(cfg, hc, folder, notes);
  if (hc.llama_family()) check_window(hc, cfg);
  return notes;
}

}  // namespace llmprof::checkpoint
