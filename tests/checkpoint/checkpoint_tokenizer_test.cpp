// What a checkpoint records of its tokenizer: a copy of the files and their content hash in
// checkpoint.json, and the Hugging Face config.json the run started from; a checkpoint saved
// before tokenizers were recorded is read with a note, and a malformed record is an error naming
// the field.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/train/task.h"
#include "llmprof/train/trainer.h"
#include "support/test_support.h"

namespace llmprof::checkpoint {
namespace {

using train::make_task;
using train::run_training;
using train::TrainOptions;
using train::TrainResult;

namespace fs = std::filesystem;
using test::ScratchDir;

std::string fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/checkpoint/fixtures/hf/" + name;
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

// A tiny char-level GPT on text, saving its checkpoint.
config::Config tiny_char(const ScratchDir& dir, const std::string& name, const std::string& text) {
  test::write_file(dir.file(name + ".txt"), text);
  config::Config c;
  c.model.n_layer = 1;
  c.model.n_head = 2;
  c.model.n_embd = 16;
  c.model.block_size = 8;
  c.data.path = dir.file(name + ".txt");
  c.train.batch_size = 2;
  c.train.eval_interval = 0;
  c.train.save_checkpoint = true;
  c.schedule.warmup_steps = 0;
  c.schedule.max_steps = 2;
  c.profile.level = config::ProfileLevel::kOff;
  c.profile.peak_flops_per_s = 1e11;  // known: a measured one costs each run a second or more
  c.energy.enabled = false;
  c.threads = 1;
  c.output.dir = dir.file("runs");
  c.output.name = name;
  return c;
}

TEST(CheckpointTokenizer, FineTuningFromARunTokenizesWithTheRunsVocabulary) {
  ScratchDir dir;
  TrainOptions quiet;
  quiet.quiet = true;
  std::string wide, narrow;
  for (int i = 0; i < 200; ++i) wide += "the quick brown fox jumps over the lazy dog\n";
  for (int i = 0; i < 200; ++i) narrow += "the dog\n";  // 8 of the 28 characters above
  const TrainResult first = run_training(tiny_char(dir, "wide", wide), quiet);
  ASSERT_EQ(llmprof::config::name(first.status), "completed") << first.message;
  // Before, the vocabulary was built from this corpus (8 characters) and the run's 28-row
  // embedding could not load.
  config::Config ft = tiny_char(dir, "narrow", narrow);
  ft.model.init_from = first.run_dir;
  const TrainResult second = run_training(ft, quiet);
  ASSERT_EQ(llmprof::config::name(second.status), "completed") << second.message;
  const rundir::CheckpointMeta m =
      rundir::read_checkpoint_meta(second.run_dir + "/checkpoint/checkpoint.json");
  ASSERT_TRUE(m.tokenizer.has_value());
  EXPECT_EQ(m.tokenizer->vocab_size, 28);  // 26 letters, space, newline: the first run's
  EXPECT_EQ(m.tokenizer->sha256,
            rundir::read_checkpoint_meta(first.run_dir + "/checkpoint/checkpoint.json")
                .tokenizer->sha256);
}

}  // namespace
}  // namespace llmprof::checkpoint
