// Tokenizer and weights files of checkpoint folders laid out as the Hugging Face hub lays out gpt2
// and distilbert-base-uncased.
#include <gtest/gtest.h>

#include "llmprof/error.h"
#include "llmprof/hf/hf_config.h"
#include "support/test_support.h"

namespace llmprof::hf {
namespace {

void touch(const test::ScratchDir& dir, const std::string& name, const std::string& text = "x") {
  test::write_file(dir.file(name), text);
}

TEST(FindTokenizerFiles, Gpt2FolderHasVocabJsonAndMerges) {
  test::ScratchDir dir;
  for (const char* f : {"vocab.json", "merges.txt", "tokenizer.json", "config.json"}) touch(dir, f);
  touch(dir, "tokenizer_config.json", R"({"model_max_length": 1024})");
  const HfTokenizerFiles t = find_tokenizer_files(dir.path());
  EXPECT_EQ(t.kind, HfTokenizerKind::kGpt2Bpe);
  EXPECT_EQ(t.vocab_json, dir.file("vocab.json"));
  EXPECT_EQ(t.merges_txt, dir.file("merges.txt"));
  EXPECT_EQ(t.tokenizer_json, dir.file("tokenizer.json"));
  EXPECT_EQ(t.tokenizer_config_json, dir.file("tokenizer_config.json"));
  EXPECT_TRUE(t.vocab_txt.empty());
}

TEST(FindTokenizerFiles, BertFolderReadsDoLowerCaseOrDefaultsToTrue) {
  test::ScratchDir dir;
  touch(dir, "vocab.txt", "[PAD]\n");
  HfTokenizerFiles t = find_tokenizer_files(dir.path());
  EXPECT_EQ(t.kind, HfTokenizerKind::kWordPiece);
  EXPECT_EQ(t.vocab_txt, dir.file("vocab.txt"));
  EXPECT_TRUE(t.do_lower_case) << "no tokenizer_config.json: BertTokenizer's default";
  EXPECT_FALSE(t.do_lower_case_from_file);

  touch(dir, "tokenizer_config.json", R"({"model_max_length": 512})");
  t = find_tokenizer_files(dir.path(), HfModelType::kDistilBert);
  EXPECT_TRUE(t.do_lower_case);
  EXPECT_FALSE(t.do_lower_case_from_file);

  touch(dir, "tokenizer_config.json", R"({"do_lower_case": false, "model_max_length": 512})");
  t = find_tokenizer_files(dir.path());
  EXPECT_FALSE(t.do_lower_case) << "a cased checkpoint";
  EXPECT_TRUE(t.do_lower_case_from_file);

  touch(dir, "tokenizer_config.json", R"({"do_lower_case": "yes"})");
  const std::string what = test::data_error_of([&] { find_tokenizer_files(dir.path()); });
  EXPECT_NE(what.find(dir.file("tokenizer_config.json")), std::string::npos) << what;
  EXPECT_NE(what.find("key 'do_lower_case'"), std::string::npos) << what;
  touch(dir, "tokenizer_config.json", "{oops");
  EXPECT_NE(test::data_error_of([&] { find_tokenizer_files(dir.path()); }).find("not valid JSON"),
            std::string::npos);
}

TEST(FindTokenizerFiles, MissingFilesListTheFolder) {
  test::ScratchDir dir;
  touch(dir, "vocab.json");
  touch(dir, "config.json");
  std::string what = test::data_error_of([&] { find_tokenizer_files(dir.path()); });
  EXPECT_NE(what.find("no GPT-2 tokenizer file merges.txt"), std::string::npos) << what;
  EXPECT_NE(what.find("holds config.json, vocab.json"), std::string::npos) << what;

  what = test::data_error_of([&] { find_tokenizer_files(dir.path(), HfModelType::kDistilBert); });
  EXPECT_NE(what.find("no BERT tokenizer file vocab.txt"), std::string::npos) << what;

  touch(dir, "merges.txt");
  touch(dir, "vocab.txt");
  what = test::data_error_of([&] { find_tokenizer_files(dir.path()); });
  EXPECT_NE(what.find("both"), std::string::npos) << what;
  EXPECT_EQ(find_tokenizer_files(dir.path(), HfModelType::kGpt2).kind, HfTokenizerKind::kGpt2Bpe);
  EXPECT_EQ(find_tokenizer_files(dir.path(), HfModelType::kDistilBert).kind,
            HfTokenizerKind::kWordPiece);

  test::ScratchDir empty;
  what = test::data_error_of([&] { find_tokenizer_files(empty.path()); });
  EXPECT_NE(what.find("is empty"), std::string::npos) << what;
  what = test::data_error_of([&] { find_tokenizer_files(empty.file("nope")); });
  EXPECT_NE(what.find("no such directory"), std::string::npos) << what;
}

TEST(FindWeights, PrefersSafetensorsThenPytorchBin) {
  test::ScratchDir dir;
  touch(dir, "pytorch_model.bin");
  HfWeightsFile w = find_weights(dir.path());
  EXPECT_EQ(w.format, HfWeightsFormat::kPytorchBin);
  EXPECT_EQ(w.path, dir.file("pytorch_model.bin"));
  touch(dir, "model.safetensors");
  w = find_weights(dir.path());
  EXPECT_EQ(w.format, HfWeightsFormat::kSafetensors);
  EXPECT_EQ(w.path, dir.file("model.safetensors"));
}

TEST(FindWeights, NoWeightsListsWhatTheFolderHolds) {
  test::ScratchDir dir;
  for (const char* f : {"config.json", "vocab.txt", "tf_model.h5"}) touch(dir, f);
  test::write_file(dir.file("onnx/model.onnx"), "x");
  std::string what = test::data_error_of([&] { find_weights(dir.path()); });
  EXPECT_NE(what.find(dir.path()), std::string::npos) << what;
  EXPECT_NE(what.find("holds config.json, onnx/, tf_model.h5, vocab.txt"), std::string::npos)
      << what;
  touch(dir, "model.safetensors.index.json", "{}");
  what = test::data_error_of([&] { find_weights(dir.path()); });
  EXPECT_NE(what.find("sharded"), std::string::npos) << what;
  touch(dir, "config.json");
  EXPECT_NE(
      test::data_error_of([&] { find_weights(dir.file("config.json")); }).find("it is a file"),
      std::string::npos);
}

}  // namespace
}  // namespace llmprof::hf
