// config.json of the Llama family (llama, qwen2, mistral): read, checked and written. Private to
// src/hf (hf_config_read.cpp and hf_config_write.cpp call it).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "json_fields.h"
#include "llmprof/hf/hf_config.h"

namespace llmprof::hf::detail {

// LlamaConfig's keys of a config.json (doc, read through keys) for model type `type`.
LlamaFields read_llama(const nlohmann::json& doc, const JsonFields& keys, HfModelType type);

// The checks of validate_hf_config for a Llama-family config.
void validate_llama(const HfModelConfig& config, const std::string& where);

// The keys of a Llama-family config into out, as transformers' save_pretrained writes them.
void add_llama(const HfModelConfig& config, nlohmann::json& out);

}  // namespace llmprof::hf::detail
