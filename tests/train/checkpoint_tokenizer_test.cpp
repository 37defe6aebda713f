// What a checkpoint records of its tokenizer: a copy of the files and their content hash in
// checkpoint.json, and the Hugging Face config.json the run started from; a checkpoint saved
// before tokenizers were recorded is read with a note, and a malformed record is an error naming
// the field.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "llmprof/config/config.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/train/hf_checkpoint.h"
#include "llmprof/train/task.h"
#include "llmprof/train/weights.h"
#include "support/test_support.h"

namespace llmprof::train {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

std::string fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/train/fixtures/hf/" + name;
}

// A checkpoint of the gpt2 fixture's shape at dir/ckpt, saved with its tokenizer.
config::Config save_gpt2(const ScratchDir& dir) {
  config::Config cfg;
  cfg.model.block_size = 8;
  cfg.model.init_from = fixture("gpt2_tiny");
  adopt_hf_model(cfg, cfg.model.init_from, "model.init_from");
  const auto tok = data::make_tokenizer(cfg.data, "");
  const auto task = make_task(cfg, tok->vocab_size(), 0);
  save_checkpoint(dir.file("ckpt"), task->module(), cfg, config::TaskKind::kLm, 3, tok.get());
  return cfg;
}

TEST(CheckpointTokenizer, ACheckpointKeepsItsTokenizerFilesHashAndFolderConfig) {
  ScratchDir dir;
  const config::Config cfg = save_gpt2(dir);
  const rundir::CheckpointMeta m = rundir::read_checkpoint_meta(dir.file("ckpt/checkpoint.json"));
  ASSERT_TRUE(m.tokenizer.has_value());
  EXPECT_EQ(m.tokenizer->type, "gpt2");
  EXPECT_EQ(m.tokenizer->vocab_size, 261);
  EXPECT_EQ(m.tokenizer->sha256, data::make_tokenizer(cfg.data, "")->fingerprint());
  EXPECT_EQ(m.tokenizer->files, (std::vector<std::string>{"vocab.json", "merges.txt"}));
  EXPECT_EQ(test::read_file(dir.file("ckpt/tokenizer/merges.txt")),
            test::read_file(fixture("gpt2_tiny/merges.txt")));
  EXPECT_EQ(m.hf_config, "hf_config.json");
  EXPECT_EQ(test::read_file(dir.file("ckpt/hf_config.json")),
            test::read_file(fixture("gpt2_tiny/config.json")));
}

TEST(CheckpointTokenizer, TakingItPointsTheConfigAtTheCopy) {
  ScratchDir dir;
  save_gpt2(dir);
  config::Config eval_cfg;  // names no tokenizer: char by default, not given
  const RunTokenizer rt = take_checkpoint_tokenizer(eval_cfg, dir.file("ckpt"), "--checkpoint");
  EXPECT_TRUE(rt.note.empty());
  EXPECT_EQ(eval_cfg.data.tokenizer, config::TokenizerKind::kGpt2);
  EXPECT_EQ(eval_cfg.data.vocab_path, dir.file("ckpt") + "/tokenizer/vocab.json");
  EXPECT_EQ(eval_cfg.data.merges_path, dir.file("ckpt") + "/tokenizer/merges.txt");
  check_run_tokenizer(rt, *data::make_tokenizer(eval_cfg.data, ""), dir.file("ckpt"));
}

TEST(CheckpointTokenizer, ACheckpointFromBeforeTokenizersWereRecordedIsReadWithANote) {
  ScratchDir dir;
  save_gpt2(dir);
  auto meta = nlohmann::json::parse(test::read_file(dir.file("ckpt/checkpoint.json")));
  meta["tokenizer"] = {{"type", "gpt2"}, {"vocab_path", "/gone/encoder.json"}};
  test::write_file(dir.file("ckpt/checkpoint.json"), meta.dump());
  config::Config cfg;
  cfg.data.vocab_path = "mine.json";
  const RunTokenizer rt = take_checkpoint_tokenizer(cfg, dir.file("ckpt"), "--checkpoint");
  EXPECT_TRUE(rt.sha256.empty());
  EXPECT_NE(rt.note.find("records no tokenizer"), std::string::npos) << rt.note;
  EXPECT_EQ(cfg.data.vocab_path, "mine.json");  // the config's, as before
}

TEST(CheckpointTokenizer, AMalformedRecordIsAnErrorNamingTheField) {
  ScratchDir dir;
  save_gpt2(dir);
  auto meta = nlohmann::json::parse(test::read_file(dir.file("ckpt/checkpoint.json")));
  meta["tokenizer"]["sha256"] = "not-a-hash";
  test::write_file(dir.file("ckpt/checkpoint.json"), meta.dump());
  const std::string what =
      test::data_error_of([&] { rundir::read_checkpoint_meta(dir.file("ckpt/checkpoint.json")); });
  EXPECT_NE(what.find("tokenizer.sha256"), std::string::npos) << what;
  meta["tokenizer"]["sha256"] = std::string(64, 'a');
  meta["tokenizer"]["dir"] = "../elsewhere";
  test::write_file(dir.file("ckpt/checkpoint.json"), meta.dump());
  const std::string dir_what =
      test::data_error_of([&] { rundir::read_checkpoint_meta(dir.file("ckpt/checkpoint.json")); });
  EXPECT_NE(dir_what.find("tokenizer.dir"), std::string::npos) << dir_what;
}

}  // namespace
}  // namespace llmprof::train
