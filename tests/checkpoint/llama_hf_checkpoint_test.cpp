// Llama-family Hugging Face folders (llama, qwen2, mistral): tiny checkpoints written by an
// independent numpy script (scripts/hf/make_llama_fixtures.py) from the equations, with its
// logits and its own tokenizer's ids. llmprof adopts the folder's model and tokenizer, loads the
// weights and must give the same logits (1e-4) and ids (exactly); exporting and loading again gives
// the same tensors bit for bit; broken folders are errors naming what is wrong.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/config/enums.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "llmprof/hf/hf_config.h"
#include "llmprof/hf/safetensors.h"
#include "llmprof/train/task.h"
#include "llmprof/train/task_model.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace llmprof::checkpoint {
namespace {

using train::Batch;
using train::make_task;
using train::Task;

const char* const kFolders[] = {"llama_tiny", "qwen2_tiny", "mistral_tiny"};

std::string llama_fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/checkpoint/fixtures/hf_llama/" + name;
}

nlohmann::json llama_expected(const std::string& folder) {
  return nlohmann::json::parse(test::read_file(folder + "/expected.json"));
}

config::Config llama_adopted(const std::string& folder, int64_t block = 8) {
  config::Config cfg;
  cfg.model.block_size = block;
  cfg.model.init_from = folder;
  adopt_hf_model(cfg, folder, "model.init_from");
  return cfg;
}

// The folder's model, adopted and loaded; logits (T, V) of ids.
struct Loaded {
  config::Config cfg;
  std::unique_ptr<Task> task;
  LoadReport report;

  explicit Loaded(const std::string& folder) : cfg(llama_adopted(folder)) {
    task = make_task(cfg, cfg.model.vocab_size, 0);
    report = load_hf_checkpoint(folder, task->module(), cfg, "model.init_from");
  }
  torch::Tensor logits(const std::vector<int64_t>& ids) {
    task->module().eval();
    torch::NoGradGuard no_grad;
    Batch b;
    b.x = torch::tensor(ids).view({1, -1});
    b.y = b.x;
    return task->logits(b)[0];
  }
};

torch::Tensor llama_to_tensor(const nlohmann::json& rows) {
  std::vector<float> flat;
  for (const auto& row : rows) {
    for (const auto& v : row) flat.push_back(v.get<float>());
  }
  return torch::tensor(flat).view({static_cast<int64_t>(rows.size()), -1});
}

void expect_logits_match(const std::string& name) {
  Loaded m(llama_fixture(name));
  EXPECT_TRUE(m.report.missing.empty()) << name << ": " << m.report.missing.front();
  EXPECT_TRUE(m.report.unexpected.empty()) << name << ": " << m.report.unexpected.front();
  const nlohmann::json e = llama_expected(llama_fixture(name));
  const torch::Tensor got = m.logits(e["ids"].get<std::vector<int64_t>>());
  const torch::Tensor want = llama_to_tensor(e["logits"]);
  ASSERT_EQ(got.sizes(), want.sizes()) << name;
  const double diff = (got - want).abs().max().item<double>();
  EXPECT_LT(diff, 1e-4) << name << ": max |llmprof - numpy| = " << diff;
}

TEST(LlamaHfCheckpoint, LlamaFolderTakesItsShapeAndGivesTheLogitsOfTheEquations) {
  const config::Config cfg = llama_adopted(llama_fixture("llama_tiny"));
  EXPECT_EQ(cfg.model.type, config::ModelType::kLlama);
  EXPECT_EQ(cfg.model.n_layer, 2);
  EXPECT_EQ(cfg.model.n_head, 4);
  EXPECT_EQ(cfg.model.n_kv_head, 2);
  EXPECT_EQ(cfg.model.n_embd, 16);
  EXPECT_EQ(cfg.model.head_dim, 8);  // not 16 / 4: given by the file
  EXPECT_EQ(cfg.model.intermediate_size, 24);
  EXPECT_EQ(cfg.model.max_positions, 64);
  EXPECT_DOUBLE_EQ(cfg.model.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(cfg.model.rms_norm_eps, 1e-5);
  EXPECT_FALSE(cfg.model.tie_embeddings);
  EXPECT_EQ(cfg.model.rope_scaling_type, config::RopeScaling::kLlama3);
  EXPECT_EQ(cfg.model.rope_scaling_original_max_position_embeddings, 256);
  EXPECT_EQ(cfg.data.tokenizer, config::TokenizerKind::kHf);
  EXPECT_EQ(cfg.data.vocab_path, llama_fixture("llama_tiny") + "/tokenizer.json");
  expect_logits_match("llama_tiny");
}

TEST(LlamaHfCheckpoint, Qwen2FolderWithBiasesATiedHeadAndBf16WeightsGivesTheLogits) {
  const config::Config cfg = llama_adopted(llama_fixture("qwen2_tiny"));
  EXPECT_TRUE(cfg.model.attention_bias);
  EXPECT_TRUE(cfg.model.tie_embeddings);
  EXPECT_EQ(cfg.model.head_dim, 0);         // 16 / 4, as Qwen2Config derives it
  EXPECT_EQ(cfg.model.sliding_window, 0);   // use_sliding_window false: no window
  Loaded m(llama_fixture("qwen2_tiny"));
  EXPECT_EQ(m.report.loaded, 1 + 2 * 12 + 1);  // embedding; 12 per layer (3 biases); norm
  expect_logits_match("qwen2_tiny");
}

TEST(LlamaHfCheckpoint, MistralFolderWithASlidingWindowThatHoldsTheBlockGivesTheLogits) {
  const config::Config cfg = llama_adopted(llama_fixture("mistral_tiny"));
  EXPECT_EQ(cfg.model.sliding_window, 32);
  EXPECT_EQ(cfg.model.n_kv_head, 1);
  expect_logits_match("mistral_tiny");
}

TEST(LlamaHfCheckpoint, TokenizerJsonGivesTheReferenceIdsOnHardStrings) {
  for (const char* name : kFolders) {
    const config::Config cfg = llama_adopted(llama_fixture(name));
    const auto tok = data::make_tokenizer(cfg.data, "");
    for (const auto& t : llama_expected(llama_fixture(name))["texts"]) {
      const std::string text = t["text"].get<std::string>();
      EXPECT_EQ(tok->encode(text), t["ids"].get<std::vector<int32_t>>())
          << name << ": \"" << text << "\"";
    }
  }
}

// A copy of a fixture folder; config.json edited by edit.
std::string copy_folder(const test::ScratchDir& dir, const std::string& name,
                        const std::function<void(nlohmann::json&)>& edit = {}) {
  const std::string to = dir.file(name);
  fs::copy(llama_fixture(name), to);
  if (edit) {
    nlohmann::json c = nlohmann::json::parse(test::read_file(to + "/config.json"));
    edit(c);
    test::write_file(to + "/config.json", c.dump(2));
  }
  return to;
}

// What adopt_hf_model (or, with load, load_hf_checkpoint) says of folder; "" when it accepts.
std::string error_of(const std::string& folder, bool load = false, int64_t block = 8) {
  try {
    config::Config cfg = llama_adopted(folder, block);
    if (load) {
      const auto task = make_task(cfg, cfg.model.vocab_size, 0);
      load_hf_checkpoint(folder, task->module(), cfg, "model.init_from");
    }
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(LlamaHfCheckpoint, BrokenFoldersAreErrorsNamingWhatIsWrong) {
  test::ScratchDir dir("llama_broken");
  {  // a truncated model.safetensors
    const std::string f = copy_folder(dir, "llama_tiny");
    const std::string bytes = test::read_file(f + "/model.safetensors");
    test::write_file(f + "/model.safetensors", bytes.substr(0, bytes.size() - 100));
    EXPECT_HAS(error_of(f, true), "model.safetensors");
  }
  {  // a kv-head count that does not divide the heads
    test::ScratchDir d2("llama_kv");
    const std::string f =
        copy_folder(d2, "llama_tiny", [](nlohmann::json& c) { c["num_key_value_heads"] = 3; });
    const std::string e = error_of(f);
    EXPECT_HAS(e, "num_key_value_heads");
    EXPECT_HAS(e, "num_attention_heads = 4 is not divisible by num_key_value_heads = 3");
  }
  {  // an unsupported model_type, named
    test::ScratchDir d2("llama_type");
    const std::string f =
        copy_folder(d2, "llama_tiny", [](nlohmann::json& c) { c["model_type"] = "gemma"; });
    EXPECT_HAS(error_of(f), "\"gemma\" is not supported");
  }
  {  // a rope_scaling type not implemented, named
    test::ScratchDir d2("llama_yarn");
    const std::string f = copy_folder(d2, "llama_tiny", [](nlohmann::json& c) {
      c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
    });
    EXPECT_HAS(error_of(f), "rope_scaling type 'yarn' is not implemented");
  }
  {  // a sliding window smaller than the block
    test::ScratchDir d2("llama_window");
    const std::string e = error_of(copy_folder(d2, "mistral_tiny"), false, 48);
    EXPECT_HAS(e, "sliding window 32");
    EXPECT_HAS(e, "model.block_size");
  }
}

TEST(LlamaHfCheckpoint, AMissingTensorIsNamed) {
  test::ScratchDir dir("llama_missing");
  const std::string f = copy_folder(dir, "llama_tiny");
  const hf::SafetensorsFile st = hf::SafetensorsFile::open(llama_fixture("llama_tiny") + "/model.safetensors");
  std::vector<std::vector<float>> keep;
  std::vector<hf::TensorToWrite> out;
  keep.reserve(st.tensors().size());  // the pointers out holds stay valid
  for (const hf::TensorView& t : st.tensors()) {
    if (t.name == "model.layers.1.mlp.up_proj.weight") continue;
    keep.push_back(hf::to_float(t));
    out.push_back({t.name, hf::DType::kF32, t.shape, keep.back().data(),
                   keep.back().size() * sizeof(float)});
  }
  fs::remove(f + "/model.safetensors");
  hf::write_safetensors(f + "/model.safetensors", out, {});
  const std::string e = error_of(f, true);
  EXPECT_HAS(e, "model.layers.1.mlp.up_proj.weight");
  EXPECT_HAS(e, "model.safetensors");
}

TEST(LlamaHfCheckpoint, AShapeKeyTheUserSetThatDisagreesNamesBothValues) {
  config::Config cfg;
  cfg.model.type = config::ModelType::kLlama;
  cfg.model.n_kv_head = 4;
  cfg.given_keys.emplace_back("model.n_kv_head", "my.yaml line 7");
  try {
    adopt_hf_model(cfg, llama_fixture("llama_tiny"), "model.init_from");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_HAS(what, "model.n_kv_head=4");
    EXPECT_HAS(what, "model.n_kv_head=2");
    EXPECT_HAS(what, "my.yaml line 7");
  }
}

TEST(LlamaHfCheckpoint, ExportThenLoadIsBitForBitAndKeepsTypeHeadAndTokenizer) {
  for (const char* name : kFolders) {
    test::ScratchDir dir("llama_export");
    Loaded m(llama_fixture(name));
    save_checkpoint(dir.file("ckpt"), m.task->module(), m.cfg, config::TaskKind::kLm, 0);
    const HfExport x = export_hf(dir.file("ckpt"), dir.file("hf"), train::task_model);
    const hf::HfModelConfig original = hf::read_hf_config(llama_fixture(name));
    const hf::HfModelConfig back = hf::read_hf_config(dir.file("hf"));
    EXPECT_EQ(back.model_type, original.model_type) << name;
    EXPECT_EQ(x.architecture, original.architectures.front()) << name;
    EXPECT_EQ(back.tie_word_embeddings, original.tie_word_embeddings) << name;
    EXPECT_EQ(back.llama.head_dim_or_default(), original.llama.head_dim_or_default()) << name;
    EXPECT_EQ(back.llama.rope_scaling.has_value(), original.llama.rope_scaling.has_value());
    EXPECT_EQ(test::read_file(dir.file("hf") + "/tokenizer.json"),
              test::read_file(llama_fixture(name) + "/tokenizer.json"))
        << name;
    const hf::SafetensorsFile exported =
        hf::SafetensorsFile::open(dir.file("hf") + "/model.safetensors");
    EXPECT_EQ(exported.find("lm_head.weight") != nullptr, !original.tie_word_embeddings) << name;
    // The exported folder loads again to the same tensors, bit for bit.
    Loaded again(dir.file("hf"));
    auto a = m.task->module().named_parameters(), b = again.task->module().named_parameters();
    ASSERT_EQ(a.size(), b.size()) << name;
    for (const auto& p : a) {
      EXPECT_TRUE(torch::equal(p.value(), b[p.key()])) << name << ": " << p.key();
    }
  }
}

}  // namespace
}  // namespace llmprof::checkpoint
