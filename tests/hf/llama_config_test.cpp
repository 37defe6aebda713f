// config.json of the Llama family on configs modelled on the published Llama-3.2-1B,
// Qwen2.5-0.5B and Mistral-7B-v0.1 files: read, checked, written and read back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llmprof/error.h"
#include "llmprof/hf/hf_config.h"
#include "support/test_support.h"

namespace llmprof::hf {
namespace {

// meta-llama/Llama-3.2-1B's config.json (keys sorted as save_pretrained writes them).
constexpr const char* kLlama32Config = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "head_dim": 64,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 16,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 32.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "use_cache": true,
  "vocab_size": 128256
})";

// Qwen/Qwen2.5-0.5B's config.json.
constexpr const char* kQwen25Config = R"({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 896,
  "initializer_range": 0.02,
  "intermediate_size": 4864,
  "max_position_embeddings": 32768,
  "max_window_layers": 24,
  "model_type": "qwen2",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})";

// mistralai/Mistral-7B-v0.1's config.json.
constexpr const char* kMistralConfig = R"({
  "architectures": ["MistralForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "vocab_size": 32000
})";

HfModelConfig read_text(const test::ScratchDir& dir, const std::string& text) {
  test::write_file(dir.file("config.json"), text);
  return read_hf_config(dir.path());
}

std::string edited(const char* text, const std::string& key, const nlohmann::json& value) {
  nlohmann::json doc = nlohmann::json::parse(text);
  if (value.is_discarded()) {
    doc.erase(key);
  } else {
    doc[key] = value;
  }
  return doc.dump(2);
}

// read_hf_config on text fails with a DataError naming the file and holding each phrase.
void expect_error(const std::string& text, const std::vector<std::string>& phrases) {
  test::ScratchDir dir("llmprof-llama-config");
  try {
    read_text(dir, text);
    ADD_FAILURE() << "accepted: " << phrases.front();
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(dir.file("config.json")), std::string::npos) << what;
    for (const std::string& p : phrases) EXPECT_NE(what.find(p), std::string::npos) << what;
  }
}

TEST(ReadHfConfig, Llama32AsPublished) {
  test::ScratchDir dir("llmprof-llama-config");
  const HfModelConfig c = read_text(dir, kLlama32Config);
  EXPECT_EQ(c.model_type, HfModelType::kLlama);
  EXPECT_TRUE(c.llama_family());
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_TRUE(c.tie_word_embeddings);
  const LlamaFields& l = c.llama;
  EXPECT_EQ(l.num_hidden_layers, 16);
  EXPECT_EQ(l.num_attention_heads, 32);
  EXPECT_EQ(l.num_key_value_heads, 8);
  EXPECT_EQ(l.hidden_size, 2048);
  EXPECT_EQ(l.intermediate_size, 8192);
  EXPECT_EQ(l.max_position_embeddings, 131072);
  EXPECT_EQ(l.head_dim_or_default(), 64);
  EXPECT_DOUBLE_EQ(l.rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(l.rope_theta, 500000.0);
  ASSERT_TRUE(l.rope_scaling.has_value());
  EXPECT_EQ(l.rope_scaling->type, "llama3");
  EXPECT_DOUBLE_EQ(l.rope_scaling->factor, 32.0);
  EXPECT_DOUBLE_EQ(l.rope_scaling->low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(l.rope_scaling->high_freq_factor, 4.0);
  EXPECT_EQ(l.rope_scaling->original_max_position_embeddings, 8192);
  EXPECT_FALSE(l.attention_bias);
  EXPECT_EQ(l.eos_token_id_json, "[128001,128008,128009]");
  EXPECT_FALSE(l.active_window(false).has_value());
}

TEST(ReadHfConfig, Qwen2HasQkvBiasesUntiedDefaultAndItsWindowSwitchedOff) {
  test::ScratchDir dir("llmprof-llama-config");
  const HfModelConfig c = read_text(dir, kQwen25Config);
  EXPECT_EQ(c.model_type, HfModelType::kQwen2);
  EXPECT_TRUE(c.llama.attention_bias);  // Qwen2Attention: q/k/v biases, whatever the file says
  EXPECT_EQ(c.llama.head_dim_or_default(), 64);  // 896 / 14: Qwen2Config has no head_dim
  EXPECT_EQ(c.llama.sliding_window, 32768);
  EXPECT_FALSE(c.llama.active_window(true).has_value());  // use_sliding_window false
  // LlamaConfig, Qwen2Config and MistralConfig do not tie by default (GPT2Config does).
  const HfModelConfig untied = read_text(dir, edited(kQwen25Config, "tie_word_embeddings",
                                                     nlohmann::json(nlohmann::json::value_t::discarded)));
  EXPECT_FALSE(untied.tie_word_embeddings);
}

TEST(ReadHfConfig, MistralSlidingWindowApplies) {
  test::ScratchDir dir("llmprof-llama-config");
  const HfModelConfig c = read_text(dir, kMistralConfig);
  EXPECT_EQ(c.model_type, HfModelType::kMistral);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.llama.active_window(false), 4096);
  EXPECT_EQ(c.llama.head_dim_or_default(), 128);
  EXPECT_FALSE(c.llama.rope_scaling.has_value());
}

TEST(ReadHfConfig, RopeParametersOfTransformers5AreRead) {
  nlohmann::json doc = nlohmann::json::parse(kLlama32Config);
  doc["rope_parameters"] = {{"rope_type", "llama3"}, {"rope_theta", 250000.0}, {"factor", 8.0},
                            {"low_freq_factor", 2.0}, {"high_freq_factor", 4.0},
                            {"original_max_position_embeddings", 4096}};
  doc.erase("rope_scaling");
  doc.erase("rope_theta");
  test::ScratchDir dir("llmprof-llama-config");
  const HfModelConfig c = read_text(dir, doc.dump());
  EXPECT_DOUBLE_EQ(c.llama.rope_theta, 250000.0);
  ASSERT_TRUE(c.llama.rope_scaling.has_value());
  EXPECT_DOUBLE_EQ(c.llama.rope_scaling->factor, 8.0);
  EXPECT_DOUBLE_EQ(c.llama.rope_scaling->low_freq_factor, 2.0);
  EXPECT_EQ(c.llama.rope_scaling->original_max_position_embeddings, 4096);
  // rope_type "default" is no scaling; the older spelling "type" is read too.
  doc["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 10000.0}};
  EXPECT_FALSE(read_text(dir, doc.dump()).llama.rope_scaling.has_value());
  doc.erase("rope_parameters");
  doc["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  EXPECT_EQ(read_text(dir, doc.dump()).llama.rope_scaling->type, "linear");
}

TEST(ReadHfConfig, KvHeadsThatDoNotDivideTheHeadsAreAnError) {
  expect_error(edited(kLlama32Config, "num_key_value_heads", 5),
               {"num_key_value_heads", "num_attention_heads = 32 is not divisible by "
                                       "num_key_value_heads = 5"});
}

TEST(ReadHfConfig, LlamaWithoutAShapeKeyOrOfAnUnknownTypeIsAnError) {
  expect_error(edited(kLlama32Config, "intermediate_size",
                      nlohmann::json(nlohmann::json::value_t::discarded)),
               {"intermediate_size"});
  expect_error(edited(kLlama32Config, "model_type", "gemma"),
               {"\"gemma\" is not supported", "llama, qwen2, mistral"});
  expect_error(edited(kLlama32Config, "rope_scaling", 3), {"rope_scaling", "expected an object"});
}

TEST(WriteHfConfig, LlamaFamilyReadsBackTheSame) {
  for (const char* text : {kLlama32Config, kQwen25Config, kMistralConfig}) {
    test::ScratchDir a("llmprof-llama-config"), b("llmprof-llama-config");
    const HfModelConfig first = read_text(a, text);
    write_hf_config(b.path(), first);
    const HfModelConfig again = read_hf_config(b.path());
    EXPECT_EQ(again.model_type, first.model_type);
    EXPECT_EQ(again.tie_word_embeddings, first.tie_word_embeddings);
    EXPECT_EQ(again.llama.num_key_value_heads, first.llama.num_key_value_heads);
    EXPECT_EQ(again.llama.head_dim_or_default(), first.llama.head_dim_or_default());
    EXPECT_EQ(again.llama.attention_bias, first.llama.attention_bias);
    EXPECT_EQ(again.llama.active_window(first.model_type == HfModelType::kQwen2),
              first.llama.active_window(first.model_type == HfModelType::kQwen2));
    EXPECT_EQ(again.llama.rope_scaling.has_value(), first.llama.rope_scaling.has_value());
    EXPECT_EQ(again.llama.eos_token_id_json, first.llama.eos_token_id_json);
    EXPECT_DOUBLE_EQ(again.llama.rope_theta, first.llama.rope_theta);
    // Written as save_pretrained writes: once more gives the same text.
    EXPECT_EQ(hf_config_json(again), hf_config_json(first));
  }
}

}  // namespace
}  // namespace llmprof::hf
