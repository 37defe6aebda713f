// The name table: GPT2LMHeadModel's, DistilBERT's and LlamaForCausalLM's (Qwen2ForCausalLM,
// MistralForCausalLM) tensor names against llmprof's.
#include "hf_names.h"

#include <fmt/format.h>

#include "llmprof/config/config.h"

namespace llmprof::checkpoint::detail {

namespace {

HfModelNames gpt2_names(int64_t n_layer) {
  HfModelNames n;
  n.body_prefix = "transformer.";
  n.tied_head = "lm_head.weight";
  n.tied_to = "wte.weight";
  n.buffer_suffixes = {".attn.bias", ".attn.masked_bias"};
  auto same = [&](const std::string& ours, const std::string& theirs) {
    n.tensors.push_back({ours, {theirs}, Layout::kSame});
  };
  auto conv1d = [&](const std::string& ours, const std::string& theirs) {
    n.tensors.push_back({ours, {theirs}, Layout::kTransposed});
  };
  same("wte.weight", "wte.weight");
  same("wpe.weight", "wpe.weight");
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string o = fmt::format("h{}.", i), t = fmt::format("h.{}.", i);
    for (const char* ln : {"ln_1", "ln_2"}) {
      same(o + ln + ".weight", t + ln + ".weight");
      same(o + ln + ".bias", t + ln + ".bias");
    }
    for (const char* lin : {"attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"}) {
      conv1d(o + lin + ".weight", t + lin + ".weight");
      same(o + lin + ".bias", t + lin + ".bias");
    }
  }
  same("ln_f.weight", "ln_f.weight");
  same("ln_f.bias", "ln_f.bias");
  return n;
}

HfModelNames distilbert_names(int64_t n_layer, bool mlm_head) {
  HfModelNames n;
  n.body_prefix = "distilbert.";
  n.buffer_suffixes = {"embeddings.position_ids"};
  auto same = [&](const std::string& ours, const std::string& theirs, bool body = true) {
    n.tensors.push_back({ours, {theirs}, Layout::kSame, body});
  };
  same("word_embeddings.weight", "embeddings.word_embeddings.weight");
  same("position_embeddings.weight", "embeddings.position_embeddings.weight");
  same("emb_layer_norm.weight", "embeddings.LayerNorm.weight");
  same("emb_layer_norm.bias", "embeddings.LayerNorm.bias");
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string o = fmt::format("layers.{}.", i), t = fmt::format("transformer.layer.{}.", i);
    for (const char* part : {"weight", "bias"}) {
      const std::string p = std::string(".") + part;
      n.tensors.push_back(
          {o + "attention.qkv_lin" + p,
           {t + "attention.q_lin" + p, t + "attention.k_lin" + p, t + "attention.v_lin" + p},
           Layout::kRowsOf3});
      for (const char* m :
           {"attention.out_lin", "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm"}) {
        same(o + m + p, t + m + p);
      }
    }
  }
  if (mlm_head) {
    n.tied_head = "vocab_projector.weight";
    n.tied_to = "word_embeddings.weight";
    for (const char* m : {"vocab_transform", "vocab_layer_norm"}) {
      same(std::string(m) + ".weight", std::string(m) + ".weight", false);
      same(std::string(m) + ".bias", std::string(m) + ".bias", false);
    }
    same("vocab_projector_bias", "vocab_projector.bias", false);
  } else {
    for (const char* m : {"pre_classifier", "classifier"}) {
      same(std::string(m) + ".weight", std::string(m) + ".weight", false);
      same(std::string(m) + ".bias", std::string(m) + ".bias", false);
    }
  }
  return n;
}

// LlamaForCausalLM: llmprof's Llama names its tensors as the body under "model." does; the head is
// lm_head.weight outside it, absent from a tied model's file (or equal to the embedding). Biases
// of q/k/v (Qwen2) are listed always and loaded where the model has them.
HfModelNames llama_names(int64_t n_layer, bool tied) {
  HfModelNames n;
  n.body_prefix = "model.";
  n.buffer_suffixes = {".rotary_emb.inv_freq"};  // older transformers saved it
  auto same = [&](const std::string& name, bool body = true) {
    n.tensors.push_back({name, {name}, Layout::kSame, body});
  };
  same("embed_tokens.weight");
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string l = fmt::format("layers.{}.", i);
    same(l + "input_layernorm.weight");
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      same(l + "self_attn." + proj + ".weight");
      if (proj[0] != 'o') same(l + "self_attn." + proj + ".bias");
    }
    same(l + "post_attention_layernorm.weight");
    for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) {
      same(l + "mlp." + proj + ".weight");
    }
  }
  same("norm.weight");
  if (tied) {
    n.tied_head = "lm_head.weight";
    n.tied_to = "embed_tokens.weight";
  } else {
    same("lm_head.weight", false);
  }
  return n;
}

}  // namespace

HfModelNames names_for(const config::Config& cfg) {
  if (cfg.model.type == config::ModelType::kGpt) return gpt2_names(cfg.model.n_layer);
  if (cfg.model.type == config::ModelType::kLlama) {
    return llama_names(cfg.model.n_layer, cfg.model.tie_embeddings);
  }
  return distilbert_names(cfg.model.n_layer, cfg.train.task == config::TaskKind::kMlm);
}

}  // namespace llmprof::checkpoint::detail
