// What a Hugging Face folder or an llmprof checkpoint says when a config adopts it: keys left at
// their defaults are replaced without a word, keys the user set are reported with where they were
// set; a config.json that is not JSON, and export of a Hugging Face folder, get their own
// messages; a gpt2 config with model.init_from needs no vocabulary paths.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/train/task.h"
#include "llmprof/train/task_model.h"
#include "support/test_support.h"

namespace llmprof::checkpoint {
namespace {

using train::make_task;

namespace fs = std::filesystem;
using test::ScratchDir;

std::string adopt_fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/checkpoint/fixtures/hf/" + name;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string s;
  for (const std::string& n : notes) s += n + "\n";
  return s;
}

TEST(HfAdopt, KeysLeftAtTheirDefaultsAreReplacedWithoutANote) {
  config::Config cfg;  // model.n_layer 4, n_embd, vocab paths...: defaults, none given
  cfg.model.block_size = 8;
  const std::vector<std::string> notes =
      adopt_hf_model(cfg, adopt_fixture("gpt2_tiny"), "model.init_from");
  EXPECT_EQ(cfg.model.n_layer, 2);
  EXPECT_EQ(cfg.model.n_embd, 8);
  EXPECT_TRUE(notes.empty()) << joined(notes);
}

// A block size the user never set shrinks to the folder's positions (a note says so); one the user
// set that exceeds them is an error naming the key.
TEST(HfAdopt, ADefaultBlockSizeShrinksToTheFoldersPositionsAGivenOneIsAnError) {
  config::Config cfg;
  ASSERT_GT(cfg.model.block_size, 16);  // the default; gpt2_tiny has 16 positions
  const std::vector<std::string> notes =
      adopt_hf_model(cfg, adopt_fixture("gpt2_tiny"), "model.init_from");
  EXPECT_EQ(cfg.model.block_size, 16);
  ASSERT_EQ(notes.size(), 1u) << joined(notes);
  EXPECT_NE(notes[0].find("model.block_size=16"), std::string::npos) << notes[0];

  config::Config given;
  given.model.block_size = 32;
  given.given_keys = {{"model.block_size", "my.yaml line 4"}};
  try {
    adopt_hf_model(given, adopt_fixture("gpt2_tiny"), "model.init_from");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "model.block_size");
    EXPECT_NE(std::string(e.what()).find("32 exceeds the checkpoint's 16 positions"),
              std::string::npos) << e.what();
  }
}

TEST(HfAdopt, ATokenizerKeyTheUserSetIsReportedWithWhereItWasSet) {
  config::Config cfg;
  cfg.model.block_size = 8;
  cfg.data.tokenizer = config::TokenizerKind::kGpt2;
  cfg.data.vocab_path = "mine/encoder.json";
  cfg.data.merges_path = "mine/vocab.bpe";
  cfg.given_keys = {{"data.tokenizer", "my.yaml line 2"}, {"data.vocab_path", "my.yaml line 3"}};
  const std::vector<std::string> notes =
      adopt_hf_model(cfg, adopt_fixture("gpt2_tiny"), "model.init_from");
  ASSERT_EQ(notes.size(), 1u) << joined(notes);  // merges_path was a default; tokenizer agrees
  EXPECT_NE(notes[0].find("data.vocab_path="), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("mine/encoder.json"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("my.yaml line 3"), std::string::npos) << notes[0];
  EXPECT_EQ(cfg.data.merges_path, adopt_fixture("gpt2_tiny") + "/merges.txt");
}

TEST(CheckpointAdopt, ShapeKeysTheConfigNeverSetAreTakenWithoutANote) {
  ScratchDir dir;
  config::Config run;
  run.model.block_size = 8;
  adopt_hf_model(run, adopt_fixture("gpt2_tiny"), "model.init_from");
  const auto task = make_task(run, run.model.vocab_size, 0);
  save_checkpoint(dir.file("ckpt"), task->module(), run, config::TaskKind::kLm, 1);

  config::Config eval_cfg;  // n_layer 4 by default: no disagreement
  EXPECT_TRUE(adopt_checkpoint_model(eval_cfg, dir.file("ckpt"), "--checkpoint").empty());
  EXPECT_EQ(eval_cfg.model.n_layer, 2);

  config::Config given;
  given.model.n_layer = 4;
  given.given_keys = {{"model.n_layer", "eval.yaml line 2"}};
  const std::vector<std::string> notes =
      adopt_checkpoint_model(given, dir.file("ckpt"), "--checkpoint");
  ASSERT_EQ(notes.size(), 1u) << joined(notes);
  EXPECT_NE(notes[0].find("eval.yaml line 2 says 4"), std::string::npos) << notes[0];
}

TEST(HfFolder, AConfigJsonThatIsNotJsonIsReportedWithFileAndPosition) {
  ScratchDir dir;
  for (const char* f : {"vocab.json", "merges.txt", "model.safetensors"}) {
    fs::copy_file(adopt_fixture("gpt2_tiny") + "/" + f, dir.file(f));
  }
  test::write_file(dir.file("config.json"), "{\n  \"model_type\": \"gpt2\",\n  n_layer: 2\n}\n");
  config::Config cfg;
  try {
    adopt_checkpoint_model(cfg, dir.path(), "model.init_from");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(dir.file("config.json")), std::string::npos) << what;
    EXPECT_NE(what.find("not valid JSON"), std::string::npos) << what;
    EXPECT_NE(what.find("line 3"), std::string::npos) << what;
    EXPECT_EQ(what.find("no config.json"), std::string::npos) << what;
  }
}

TEST(HfFolder, ExportOfAHuggingFaceFolderSaysItIsOne) {
  ScratchDir dir;
  try {
    export_hf(adopt_fixture("gpt2_tiny"), dir.file("out"), train::task_model);
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is a Hugging Face folder, not an llmprof run"), std::string::npos) << what;
    EXPECT_EQ(what.find("no config.json"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir.file("out")));
}

TEST(ConfigValidation, Gpt2WithAHuggingFaceFolderNeedsNoVocabularyPaths) {
  ScratchDir dir;
  const std::string minimal = "data:\n  tokenizer: gpt2\n";
  test::write_file(dir.file("bare.yaml"), minimal);
  EXPECT_THROW(config::load_config(dir.file("bare.yaml")), ConfigError);  // nothing gives them
  test::write_file(dir.file("hf.yaml"), minimal + "model:\n  block_size: 8\n  init_from: " +
                                            adopt_fixture("gpt2_tiny") + "\n");
  config::Config cfg = config::load_config(dir.file("hf.yaml"));
  adopt_hf_model(cfg, cfg.model.init_from, "model.init_from");
  config::validate(cfg);
  EXPECT_EQ(cfg.data.vocab_path, adopt_fixture("gpt2_tiny") + "/vocab.json");
}

}  // namespace
}  // namespace llmprof::checkpoint
