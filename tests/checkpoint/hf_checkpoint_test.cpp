// Hugging Face folders: tiny GPT-2 and DistilBERT checkpoints written in transformers' layout by
// an independent Python script (scripts/hf/make_hf_fixtures.py), with logits it computed in
// plain Python from transformers' equations and token ids from its own BPE / WordPiece. llmprof adopts the folder's model and tokenizer,
// loads the weights and must give the same logits; exporting gives back the same tensors.
#include "llmprof/checkpoint/hf_checkpoint.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "llmprof/hf/hf_config.h"
#include "llmprof/hf/safetensors.h"
#include "llmprof/model/distilbert.h"
#include "llmprof/model/gpt.h"
#include "llmprof/train/task.h"
#include "llmprof/train/task_model.h"
#include "support/test_support.h"

namespace llmprof::checkpoint {
namespace {

using train::make_task;

std::string hf_fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/checkpoint/fixtures/hf/" + name;
}

nlohmann::json hf_expected(const std::string& name) {
  std::ifstream in(hf_fixture(name) + "/expected.json");
  return nlohmann::json::parse(in);
}

torch::Tensor hf_to_tensor(const nlohmann::json& rows) {
  std::vector<float> flat;
  for (const auto& row : rows) {
    for (const auto& v : row) flat.push_back(v.get<float>());
  }
  return torch::tensor(flat).view({static_cast<int64_t>(rows.size()), -1});
}

config::Config hf_adopted(const std::string& folder, config::TaskKind task, int64_t block) {
  config::Config cfg;
  cfg.train.task = task;
  cfg.model.block_size = block;
  cfg.model.init_from = folder;
  adopt_hf_model(cfg, folder, "model.init_from");
  return cfg;
}

TEST(HfCheckpoint, Gpt2FolderGivesTheLogitsOfTransformersEquations) {
  const std::string folder = hf_fixture("gpt2_tiny");
  ASSERT_TRUE(is_hf_folder(folder));
  config::Config cfg = hf_adopted(folder, config::TaskKind::kLm, 8);
  EXPECT_EQ(cfg.model.type, config::ModelType::kGpt);
  EXPECT_EQ(cfg.model.n_layer, 2);
  EXPECT_EQ(cfg.model.n_embd, 8);
  EXPECT_EQ(cfg.model.max_positions, 16);
  EXPECT_EQ(cfg.data.tokenizer, config::TokenizerKind::kGpt2);
  EXPECT_EQ(cfg.data.merges_path, folder + "/merges.txt");
  const auto task = make_task(cfg, cfg.model.vocab_size, 0);
  const LoadReport r = load_hf_checkpoint(folder, task->module(), cfg, "model.init_from");
  EXPECT_EQ(r.loaded, 2 + 2 * 12 + 2);  // wte, wpe; 12 per block; ln_f
  EXPECT_TRUE(r.missing.empty()) << r.missing.front();
  EXPECT_TRUE(r.unexpected.empty()) << r.unexpected.front();  // attn.bias buffers are known

  const nlohmann::json e = hf_expected("gpt2_tiny");
  auto& gpt = dynamic_cast<model::GptImpl&>(task->module());
  gpt.eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor ids = torch::tensor(e["ids"].get<std::vector<int64_t>>()).view({1, -1});
  const torch::Tensor logits = gpt.forward(ids)[0];
  const torch::Tensor want = hf_to_tensor(e["logits"]);
  ASSERT_EQ(logits.sizes(), want.sizes());
  EXPECT_LT((logits - want).abs().max().item<double>(), 1e-4);
}

TEST(HfCheckpoint, DistilBertFolderGivesTheMaskedLmLogitsOfTransformersEquations) {
  const std::string folder = hf_fixture("distilbert_tiny");
  config::Config cfg = hf_adopted(folder, config::TaskKind::kMlm, 8);
  EXPECT_EQ(cfg.model.type, config::ModelType::kDistilbert);
  EXPECT_EQ(cfg.model.ffn_dim, 16);
  EXPECT_EQ(cfg.model.max_positions, 12);
  EXPECT_EQ(cfg.data.tokenizer, config::TokenizerKind::kWordpiece);
  EXPECT_TRUE(cfg.data.lower_case);
  const auto task = make_task(cfg, cfg.model.vocab_size, 1);
  const LoadReport r = load_hf_checkpoint(folder, task->module(), cfg, "model.init_from");
  EXPECT_TRUE(r.missing.empty()) << r.missing.front();
  EXPECT_TRUE(r.unexpected.empty()) << r.unexpected.front();  // tied projector checked, not unused

  const nlohmann::json e = hf_expected("distilbert_tiny");
  auto& bert = dynamic_cast<model::DistilBertImpl&>(task->module());
  bert.eval();
  torch::NoGradGuard no_grad;
  const auto id_list = e["ids"].get<std::vector<int64_t>>();
  const torch::Tensor ids = torch::tensor(id_list).view({1, -1});
  const torch::Tensor mask = torch::tensor(e["mask"].get<std::vector<int64_t>>()).view({1, -1});
  const torch::Tensor pos = torch::arange(static_cast<int64_t>(id_list.size())).view({1, -1});
  const torch::Tensor logits = bert.mlm_logits(bert.encode(ids, mask), pos)[0];
  const torch::Tensor want = hf_to_tensor(e["logits"]);
  ASSERT_EQ(logits.sizes(), want.sizes());
  // Padding positions attend over the real tokens only in both; compare every position.
  EXPECT_LT((logits - want).abs().max().item<double>(), 1e-4);
}

TEST(HfCheckpoint, TheFolderTokenizersGiveTheReferenceIds) {
  for (const char* name : {"gpt2_tiny", "distilbert_tiny"}) {
    config::Config cfg = hf_adopted(hf_fixture(name), name[0] == 'g' ? config::TaskKind::kLm : config::TaskKind::kMlm, 8);
    const auto tok = data::make_tokenizer(cfg.data, "");
    const nlohmann::json e = hf_expected(name);
    EXPECT_EQ(tok->encode(e["text"].get<std::string>()),
              e["text_ids"].get<std::vector<int32_t>>())
        << name;
  }
}

TEST(HfCheckpoint, DistilBertForClassificationKeepsItsNewHeadAtInit) {
  const std::string folder = hf_fixture("distilbert_tiny");
  config::Config cfg = hf_adopted(folder, config::TaskKind::kClassify, 8);
  const auto task = make_task(cfg, cfg.model.vocab_size, 0);
  const LoadReport r = load_hf_checkpoint(folder, task->module(), cfg, "model.init_from");
  EXPECT_EQ(r.missing, (std::vector<std::string>{"pre_classifier.weight", "pre_classifier.bias",
                                                 "classifier.weight", "classifier.bias"}));
  EXPECT_EQ(r.unexpected.size(), 6u);  // the MLM head: transform, layer norm, projector
}

TEST(HfCheckpoint, AShapeKeyTheUserSetThatDisagreesNamesBothValues) {
  config::Config cfg;
  cfg.model.n_layer = 6;
  cfg.given_keys.emplace_back("model.n_layer", "my.yaml line 3");
  try {
    adopt_hf_model(cfg, hf_fixture("gpt2_tiny"), "model.init_from");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("model.n_layer=6"), std::string::npos) << what;
    EXPECT_NE(what.find("model.n_layer=2"), std::string::npos) << what;
    EXPECT_NE(what.find("my.yaml line 3"), std::string::npos) << what;
  }
}

TEST(HfCheckpoint, ABrokenWeightsFileIsAnErrorNamingTheFile) {
  test::ScratchDir dir("hf_broken");
  for (const char* f : {"config.json", "vocab.json", "merges.txt"}) {
    test::write_file(dir.file(f), test::read_file(hf_fixture("gpt2_tiny") + "/" + f));
  }
  const std::string bytes = test::read_file(hf_fixture("gpt2_tiny") + "/model.safetensors");
  test::write_file(dir.file("model.safetensors"), bytes.substr(0, bytes.size() / 2));  // cut
  config::Config cfg = hf_adopted(dir.path(), config::TaskKind::kLm, 8);
  const auto task = make_task(cfg, cfg.model.vocab_size, 0);
  try {
    load_hf_checkpoint(dir.path(), task->module(), cfg, "model.init_from");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors"), std::string::npos) << e.what();
  }
}

// A folder holding the fixture's files, with config.json edited by edit.
std::string copy_gpt2(const test::ScratchDir& dir, const std::function<void(nlohmann::json&)>& edit,
                      bool weights = true) {
  for (const char* f : {"vocab.json", "merges.txt", "model.safetensors"}) {
    if (!weights && std::string(f) == "model.safetensors") continue;
    test::write_file(dir.file(f), test::read_file(hf_fixture("gpt2_tiny") + "/" + f));
  }
  nlohmann::json config = nlohmann::json::parse(test::read_file(hf_fixture("gpt2_tiny") + "/config.json"));
  edit(config);
  test::write_file(dir.file("config.json"), config.dump(2));
  return dir.path();
}

TEST(HfCheckpoint, AMisShapedTensorNamesItWithBothShapes) {
  test::ScratchDir dir("hf_misshaped");
  const std::string folder = copy_gpt2(dir, [](nlohmann::json& c) { c["n_positions"] = 32; });
  config::Config cfg = hf_adopted(folder, config::TaskKind::kLm, 8);
  const auto task = make_task(cfg, cfg.model.vocab_size, 0);
  try {
    load_hf_checkpoint(folder, task->module(), cfg, "model.init_from");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'wpe.weight'"), std::string::npos) << what;
    EXPECT_NE(what.find("(16, 8)"), std::string::npos) << what;
    EXPECT_NE(what.find("(32, 8)"), std::string::npos) << what;
    EXPECT_NE(what.find("model.safetensors"), std::string::npos) << what;
  }
}

TEST(HfCheckpoint, AnUnknownModelTypeNamesTheValue) {
  test::ScratchDir dir("hf_llama");
  const std::string folder = copy_gpt2(dir, [](nlohmann::json& c) { c["model_type"] = "llama"; });
  config::Config cfg;
  try {
    adopt_hf_model(cfg, folder, "model.init_from");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("llama"), std::string::npos) << what;
    EXPECT_NE(what.find("config.json"), std::string::npos) << what;
  }
}

TEST(HfCheckpoint, WeightsWithoutConfigJsonSayWhatIsMissing) {
  test::ScratchDir dir("hf_noconfig");
  test::write_file(dir.file("model.safetensors"),
                   test::read_file(hf_fixture("gpt2_tiny") + "/model.safetensors"));
  config::Config cfg;
  try {
    resolve_checkpoint_dir(dir.path(), cfg, "model.init_from");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no config.json"), std::string::npos) << e.what();
  }
}

TEST(HfCheckpoint, PytorchModelBinIsReadWhenThereIsNoSafetensors) {
  // A state dict in torch.save's zip format (LibTorch's pickle_save writes what torch.load reads).
  test::ScratchDir dir("hf_bin");
  const std::string folder = copy_gpt2(dir, [](nlohmann::json&) {}, /*weights=*/false);
  const hf::SafetensorsFile st =
      hf::SafetensorsFile::open(hf_fixture("gpt2_tiny") + "/model.safetensors");
  c10::Dict<std::string, torch::Tensor> state;
  for (const hf::TensorView& t : st.tensors()) {
    std::vector<float> v = hf::to_float(t);
    state.insert(t.name, torch::from_blob(v.data(), t.shape, torch::kFloat).clone());
  }
  const std::vector<char> bytes = torch::pickle_save(state);
  test::write_file(dir.file("pytorch_model.bin"), std::string(bytes.begin(), bytes.end()));
  config::Config cfg = hf_adopted(folder, config::TaskKind::kLm, 8);
  const auto task = make_task(cfg, cfg.model.vocab_size, 0);
  const LoadReport r = load_hf_checkpoint(folder, task->module(), cfg, "model.init_from");
  EXPECT_EQ(r.loaded, 28);
  EXPECT_TRUE(r.unexpected.empty());
  auto& gpt = dynamic_cast<model::GptImpl&>(task->module());
  gpt.eval();
  torch::NoGradGuard no_grad;
  const nlohmann::json e = hf_expected("gpt2_tiny");
  const torch::Tensor ids = torch::tensor(e["ids"].get<std::vector<int64_t>>()).view({1, -1});
  EXPECT_LT((gpt.forward(ids)[0] - hf_to_tensor(e["logits"])).abs().max().item<double>(), 1e-4);
}

TEST(HfCheckpoint, ExportWritesBackTheSameTensorsUnderHuggingFaceNames) {
  test::ScratchDir dir("hf_export");
  const std::string folder = hf_fixture("gpt2_tiny");
  config::Config cfg = hf_adopted(folder, config::TaskKind::kLm, 8);
  const auto task = make_task(cfg, cfg.model.vocab_size, 0);
  load_hf_checkpoint(folder, task->module(), cfg, "model.init_from");
  save_checkpoint(dir.file("ckpt"), task->module(), cfg, config::TaskKind::kLm, 0);

  const HfExport x = export_hf(dir.file("ckpt"), dir.file("hf"), train::task_model);
  EXPECT_EQ(x.architecture, "GPT2LMHeadModel");
  const hf::HfModelConfig back = hf::read_hf_config(dir.file("hf"));
  EXPECT_EQ(back.gpt2.n_layer, 2);
  EXPECT_EQ(back.gpt2.n_positions, 16);
  EXPECT_EQ(back.gpt2.activation_function, "gelu_new");
  const hf::SafetensorsFile original = hf::SafetensorsFile::open(folder + "/model.safetensors");
  const hf::SafetensorsFile exported =
      hf::SafetensorsFile::open(dir.file("hf") + "/model.safetensors");
  int64_t compared = 0;
  for (const hf::TensorView& t : original.tensors()) {
    const std::string buffer = ".attn.bias";  // h.N.attn.bias: the causal mask, not a weight
    if (t.name.size() > buffer.size() &&
        t.name.compare(t.name.size() - buffer.size(), buffer.size(), buffer) == 0) {
      continue;
    }
    const hf::TensorView* e = exported.find("transformer." + t.name);
    ASSERT_NE(e, nullptr) << t.name;
    EXPECT_EQ(e->shape, t.shape) << t.name;
    EXPECT_EQ(hf::to_float(*e), hf::to_float(t)) << t.name;
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int64_t>(exported.tensors().size()));
  EXPECT_EQ(test::read_file(dir.file("hf") + "/merges.txt"), test::read_file(folder + "/merges.txt"));
  // The exported folder loads again, to the same model.
  config::Config again = hf_adopted(dir.file("hf"), config::TaskKind::kLm, 8);
  EXPECT_EQ(again.model.n_embd, cfg.model.n_embd);
  EXPECT_THROW(export_hf(dir.file("ckpt"), dir.file("hf"), train::task_model),
               ConfigError);  // never overwritten
}

}  // namespace
}  // namespace llmprof::checkpoint
