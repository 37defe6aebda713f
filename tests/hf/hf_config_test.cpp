// config.json readers and writer on configs modelled on the real gpt2, distilbert-base-uncased and
// distilbert-base-uncased-finetuned-sst-2-english files.
#include "llmprof/hf/hf_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::hf {
namespace {

// gpt2's config.json as published (keys sorted, as save_pretrained writes them).
constexpr const char* kGpt2Config = R"({
  "activation_function": "gelu_new",
  "architectures": [
    "GPT2LMHeadModel"
  ],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "summary_activation": null,
  "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true,
  "summary_type": "cls_index",
  "summary_use_proj": true,
  "task_specific_params": {
    "text-generation": {
      "do_sample": true,
      "max_length": 50
    }
  },
  "vocab_size": 50257
}
)";

// distilbert-base-uncased's config.json.
constexpr const char* kDistilBertConfig = R"({
  "activation": "gelu",
  "architectures": [
    "DistilBertForMaskedLM"
  ],
  "attention_dropout": 0.1,
  "dim": 768,
  "dropout": 0.1,
  "hidden_dim": 3072,
  "initializer_range": 0.02,
  "max_position_embeddings": 512,
  "model_type": "distilbert",
  "n_heads": 12,
  "n_layers": 6,
  "pad_token_id": 0,
  "qa_dropout": 0.1,
  "seq_classif_dropout": 0.2,
  "sinusoidal_pos_embds": false,
  "tie_weights_": true,
  "vocab_size": 30522
}
)";

// distilbert-base-uncased-finetuned-sst-2-english's config.json: the base one with a
// classification head's keys.
std::string sst2_config() {
  nlohmann::json doc = nlohmann::json::parse(kDistilBertConfig);
  doc["architectures"] = nlohmann::json::array({"DistilBertForSequenceClassification"});
  doc["finetuning_task"] = "sst-2";
  doc["id2label"] = {{"0", "NEGATIVE"}, {"1", "POSITIVE"}};
  doc["label2id"] = {{"NEGATIVE", 0}, {"POSITIVE", 1}};
  doc["output_past"] = true;
  return doc.dump(2);
}

// A folder holding config.json with that text.
struct ConfigFolder {
  explicit ConfigFolder(const std::string& text) {
    test::write_file(dir.file("config.json"), text);
  }
  std::string file() const { return dir.file("config.json"); }
  test::ScratchDir dir;
};

// The text with one top-level key replaced (or removed when value is null-discarded).
std::string with_key(const std::string& text, const std::string& key, const nlohmann::json& value) {
  nlohmann::json doc = nlohmann::json::parse(text);
  if (value.is_discarded()) {
    doc.erase(key);
  } else {
    doc[key] = value;
  }
  return doc.dump(2);
}

std::string without_key(const std::string& text, const std::string& key) {
  return with_key(text, key, nlohmann::json(nlohmann::json::value_t::discarded));
}

// read_hf_config on the text fails with a DataError naming the file and holding each phrase.
void expect_error(const std::string& text, const std::vector<std::string>& phrases) {
  ConfigFolder folder(text);
  try {
    read_hf_config(folder.dir.path());
    ADD_FAILURE() << "accepted: " << phrases.front();
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(folder.file()), std::string::npos) << what;
    for (const std::string& p : phrases) EXPECT_NE(what.find(p), std::string::npos) << what;
  }
}

TEST(ReadHfConfig, Gpt2AsPublished) {
  ConfigFolder folder(kGpt2Config);
  const HfModelConfig c = read_hf_config(folder.dir.path());
  EXPECT_EQ(c.file, folder.file());
  EXPECT_EQ(c.model_type, HfModelType::kGpt2);
  EXPECT_EQ(c.architectures, std::vector<std::string>{"GPT2LMHeadModel"});
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.gpt2.n_layer, 12);
  EXPECT_EQ(c.gpt2.n_head, 12);
  EXPECT_EQ(c.gpt2.n_embd, 768);
  EXPECT_EQ(c.gpt2.n_positions, 1024);
  EXPECT_FALSE(c.gpt2.n_inner.has_value());
  EXPECT_DOUBLE_EQ(c.gpt2.layer_norm_epsilon, 1e-5);
  EXPECT_EQ(c.gpt2.activation_function, "gelu_new");
  EXPECT_DOUBLE_EQ(c.gpt2.resid_pdrop, 0.1);
  EXPECT_DOUBLE_EQ(c.gpt2.embd_pdrop, 0.1);
  EXPECT_DOUBLE_EQ(c.gpt2.attn_pdrop, 0.1);
  EXPECT_EQ(c.gpt2.bos_token_id, 50256);
  EXPECT_EQ(c.gpt2.eos_token_id, 50256);
  EXPECT_TRUE(c.id2label.empty());
  EXPECT_EQ(c.num_labels(), 2) << "transformers' default";
  EXPECT_EQ(c.torch_dtype, "");
  EXPECT_EQ(c.defaulted, std::vector<std::string>{"tie_word_embeddings"});
}

TEST(ReadHfConfig, DistilBertBaseUncasedAsPublished) {
  ConfigFolder folder(kDistilBertConfig);
  const HfModelConfig c = read_hf_config(folder.dir.path());
  EXPECT_EQ(c.model_type, HfModelType::kDistilBert);
  EXPECT_EQ(c.architectures, std::vector<std::string>{"DistilBertForMaskedLM"});
  EXPECT_EQ(c.vocab_size, 30522);
  const DistilBertFields& d = c.distilbert;
  EXPECT_EQ(d.n_layers, 6);
  EXPECT_EQ(d.n_heads, 12);
  EXPECT_EQ(d.dim, 768);
  EXPECT_EQ(d.hidden_dim, 3072);
  EXPECT_EQ(d.max_position_embeddings, 512);
  EXPECT_EQ(d.activation, "gelu");
  EXPECT_DOUBLE_EQ(d.dropout, 0.1);
  EXPECT_DOUBLE_EQ(d.attention_dropout, 0.1);
  EXPECT_FALSE(d.sinusoidal_pos_embds);
  EXPECT_EQ(d.pad_token_id, 0);
  EXPECT_DOUBLE_EQ(d.seq_classif_dropout, 0.2);
  EXPECT_TRUE(c.id2label.empty());
}

TEST(ReadHfConfig, DistilBertClassificationHeadLabels) {
  ConfigFolder folder(sst2_config());
  const HfModelConfig c = read_hf_config(folder.dir.path());
  EXPECT_EQ(c.architectures, std::vector<std::string>{"DistilBertForSequenceClassification"});
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"NEGATIVE", "POSITIVE"}));
  EXPECT_EQ(c.num_labels(), 2);
  // A bare num_labels gives transformers' LABEL_i names.
  ConfigFolder three(with_key(kDistilBertConfig, "num_labels", 3));
  EXPECT_EQ(read_hf_config(three.dir.path()).id2label,
            (std::vector<std::string>{"LABEL_0", "LABEL_1", "LABEL_2"}));
  // With both, id2label wins, as in transformers.
  ConfigFolder both(with_key(sst2_config(), "num_labels", 5));
  EXPECT_EQ(read_hf_config(both.dir.path()).num_labels(), 2);
}

TEST(ReadHfConfig, Gpt2FallsBackToNCtxAndDefaultsOptionalKeys) {
  std::string text = without_key(kGpt2Config, "n_positions");
  for (const char* key :
       {"layer_norm_epsilon", "activation_function", "resid_pdrop", "embd_pdrop", "attn_pdrop"}) {
    text = without_key(text, key);
  }
  text = with_key(text, "n_inner", 2048);
  text = with_key(text, "torch_dtype", "float16");
  text = with_key(text, "tie_word_embeddings", false);
  ConfigFolder folder(text);
  const HfModelConfig c = read_hf_config(folder.dir.path());
  EXPECT_EQ(c.gpt2.n_positions, 1024) << "from n_ctx";
  EXPECT_EQ(c.gpt2.n_inner, 2048);
  EXPECT_EQ(c.torch_dtype, "float16");
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.gpt2.activation_function, "gelu_new");
  EXPECT_DOUBLE_EQ(c.gpt2.layer_norm_epsilon, 1e-5);
  EXPECT_EQ(c.defaulted.size(), 5u);
}

TEST(ReadHfConfig, UnsupportedModelTypeNamesValueAndTheSupportedOnes) {
  expect_error(with_key(kGpt2Config, "model_type", "bert"),
               {"model_type", "\"bert\"", "gpt2, distilbert"});
  expect_error(without_key(kGpt2Config, "model_type"), {"model_type", "gpt2, distilbert"});
  expect_error(with_key(kGpt2Config, "model_type", 2), {"model_type", "expected a string"});
}

TEST(ReadHfConfig, MissingRequiredKeysNameFileAndKey) {
  for (const char* key : {"n_layer", "n_head", "n_embd", "vocab_size"}) {
    expect_error(without_key(kGpt2Config, key), {std::string("no key '") + key + "'"});
  }
  expect_error(without_key(without_key(kGpt2Config, "n_ctx"), "n_positions"),
               {"no key 'n_ctx'", "n_positions or n_ctx"});
  for (const char* key : {"n_layers", "n_heads", "dim", "hidden_dim", "max_position_embeddings"}) {
    expect_error(without_key(kDistilBertConfig, key), {std::string("no key '") + key + "'"});
  }
}

TEST(ReadHfConfig, WrongTypesAndValuesNameFileAndKey) {
  expect_error(with_key(kGpt2Config, "n_head", "12"), {"key 'n_head'", "expected an integer"});
  expect_error(with_key(kGpt2Config, "n_layer", 12.5), {"key 'n_layer'", "expected an integer"});
  expect_error(with_key(kGpt2Config, "n_layer", 0), {"key 'n_layer'", ">= 1"});
  expect_error(with_key(kGpt2Config, "n_head", 7), {"key 'n_head'", "not divisible"});
  expect_error(with_key(kGpt2Config, "layer_norm_epsilon", "1e-5"),
               {"key 'layer_norm_epsilon'", "expected a number"});
  expect_error(with_key(kGpt2Config, "layer_norm_epsilon", 0), {"key 'layer_norm_epsilon'"});
  expect_error(with_key(kGpt2Config, "attn_pdrop", 1.5), {"key 'attn_pdrop'", "[0, 1]"});
  expect_error(with_key(kGpt2Config, "architectures", "GPT2LMHeadModel"),
               {"key 'architectures'", "list of strings"});
  expect_error(with_key(kGpt2Config, "tie_word_embeddings", 1), {"key 'tie_word_embeddings'"});
  expect_error(with_key(kDistilBertConfig, "sinusoidal_pos_embds", "false"),
               {"key 'sinusoidal_pos_embds'", "true or false"});
  expect_error(with_key(kDistilBertConfig, "pad_token_id", 30522), {"key 'pad_token_id'"});
  expect_error(with_key(kDistilBertConfig, "dim", 770), {"key 'n_heads'", "dim = 770"});
  expect_error(with_key(sst2_config(), "id2label", nlohmann::json{{"0", "A"}, {"2", "B"}}),
               {"key 'id2label'", "\"2\""});
  expect_error(with_key(sst2_config(), "id2label", nlohmann::json::array()), {"key 'id2label'"});
  expect_error(with_key(kDistilBertConfig, "num_labels", 0), {"key 'num_labels'"});
}

TEST(ReadHfConfig, MissingOrBrokenFileIsADataErrorNamingIt) {
  test::ScratchDir dir;
  EXPECT_THROW(read_hf_config(dir.path()), DataError);
  expect_error("{\"model_type\": \"gpt2\",\n  \"n_layer\": 12,,\n}", {"not valid JSON", "line 2"});
  expect_error("[1, 2]", {"expected an object"});
}

TEST(WriteHfConfig, RoundTripsGpt2AndDistilBert) {
  for (const std::string& text :
       {std::string(kGpt2Config), std::string(kDistilBertConfig), sst2_config()}) {
    ConfigFolder in(text);
    const HfModelConfig a = read_hf_config(in.dir.path());
    test::ScratchDir out;
    write_hf_config(out.path(), a);
    const HfModelConfig b = read_hf_config(out.path());
    EXPECT_EQ(hf_config_json(a), hf_config_json(b));
    EXPECT_EQ(b.architectures, a.architectures);
    EXPECT_EQ(b.id2label, a.id2label);
    EXPECT_EQ(b.gpt2.n_positions, a.gpt2.n_positions);
    EXPECT_EQ(b.distilbert.hidden_dim, a.distilbert.hidden_dim);
    EXPECT_EQ(b.torch_dtype, "float32");
    EXPECT_TRUE(b.defaulted.empty()) << "every key is written: " << b.defaulted.front();
  }
}

TEST(WriteHfConfig, WritesWhatTransformersReadsSortedWithFloat32AndNoVersion) {
  ConfigFolder in(sst2_config());
  const std::string text = hf_config_json(read_hf_config(in.dir.path()));
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["model_type"], "distilbert");
  EXPECT_EQ(doc["torch_dtype"], "float32");
  EXPECT_FALSE(doc.contains("transformers_version"));
  EXPECT_EQ(doc["id2label"], (nlohmann::json{{"0", "NEGATIVE"}, {"1", "POSITIVE"}}));
  EXPECT_EQ(doc["label2id"], (nlohmann::json{{"NEGATIVE", 0}, {"POSITIVE", 1}}));
  EXPECT_EQ(text.substr(0, 17), "{\n  \"activation\":") << "sorted, 2-space indent";
  EXPECT_EQ(text.back(), '\n');
  ConfigFolder gpt2(kGpt2Config);
  const nlohmann::json g = nlohmann::json::parse(hf_config_json(read_hf_config(gpt2.dir.path())));
  EXPECT_EQ(g["n_ctx"], 1024);
  EXPECT_TRUE(g["n_inner"].is_null());
  EXPECT_EQ(g["activation_function"], "gelu_new");
  EXPECT_FALSE(g.contains("id2label")) << "an LM has no labels to write";
}

TEST(WriteHfConfig, RefusesAnInvalidConfigBeforeWriting) {
  HfModelConfig c;
  c.model_type = HfModelType::kDistilBert;
  c.vocab_size = 100;
  test::ScratchDir out;
  try {
    write_hf_config(out.path(), c);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'n_layers'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(test::read_file(out.file("config.json")).empty());
}

}  // namespace
}  // namespace llmprof::hf

namespace llmprof::hf {
namespace {

// tokenizer_config.json as `llmprof export` writes it (the text earlier releases wrote by hand).
TEST(WriteTokenizerConfig, WritesTheClassLengthAndLowerCasingSorted) {
  test::ScratchDir out;
  write_tokenizer_config(out.path(), {"DistilBertTokenizer", 512, true});
  EXPECT_EQ(test::read_file(out.file("tokenizer_config.json")),
            "{\n  \"do_lower_case\": true,\n  \"model_max_length\": 512,\n"
            "  \"tokenizer_class\": \"DistilBertTokenizer\"\n}\n");
  // No WordPiece: no do_lower_case at all (transformers' default is not ours to state).
  EXPECT_EQ(tokenizer_config_json({"PreTrainedTokenizerFast", 64, std::nullopt}),
            "{\n  \"model_max_length\": 64,\n"
            "  \"tokenizer_class\": \"PreTrainedTokenizerFast\"\n}\n");
}

TEST(ConfigNamesModelType, TrueOnlyForAnObjectWithModelType) {
  test::ScratchDir dir;
  EXPECT_FALSE(config_names_model_type(dir.path())) << "no config.json";
  for (const auto& [text, expected] : std::vector<std::pair<std::string, bool>>{
           {R"({"model_type": "gpt2"})", true},
           {R"({"n_layer": 2})", false},
           {R"(["model_type"])", false},
           {R"({"model_type": )", false}}) {
    test::write_file(dir.file("config.json"), text);
    EXPECT_EQ(config_names_model_type(dir.path()), expected) << text;
  }
}

}  // namespace
}  // namespace llmprof::hf
