#include <gtest/gtest.h>

#include <string>

#include "llmprof/config/config.h"
#include "llmprof/data/corpus.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::data {
namespace {

using Ids = std::vector<int32_t>;

// The real GPT-2 tokenizer from shared/data, loaded once for the suite.
const Tokenizer& gpt2() {
  static const auto tok = make_gpt2_tokenizer(test::shared_data("vocab/gpt2-encoder.json"),
                                              test::shared_data("vocab/gpt2-vocab.bpe"));
  return *tok;
}

using test::data_error_of;

TEST(Gpt2Tokenizer, HasVocab50257WhenFilesAreGpt2s) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(gpt2().name(), "gpt2");
  EXPECT_EQ(gpt2().vocab_size(), 50257);
  EXPECT_EQ(gpt2().decode({50256}), "<|endoftext|>");
}

TEST(Gpt2Tokenizer, EncodesKnownStringsToKnownIds) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(gpt2().encode("Hello world"), (Ids{15496, 995}));
  EXPECT_EQ(gpt2().encode(" the"), (Ids{262}));
  EXPECT_EQ(gpt2().encode("First Citizen:"), (Ids{5962, 22307, 25}));
  // Checked with OpenAI's encoder.py: contractions, a double space before a word, "!!".
  EXPECT_EQ(gpt2().encode("I'm here, aren't you?  Yes!!"),
            (Ids{40, 1101, 994, 11, 3588, 470, 345, 30, 220, 3363, 3228}));
  EXPECT_EQ(gpt2().encode("café naïve — 東京"),
            (Ids{66, 1878, 2634, 41492, 851, 10545, 251, 109, 12859, 105}));
  EXPECT_TRUE(gpt2().encode("").empty());
}

TEST(Gpt2Tokenizer, RoundTripsWhenTextIsTinyShakespeare) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const std::string text =
      read_text_file(test::shared_data("tinyshakespeare.txt")).substr(0, 20000);
  const Ids ids = gpt2().encode(text);
  EXPECT_LT(ids.size(), text.size() / 3);  // BPE compresses English about 4 chars per token
  EXPECT_EQ(gpt2().decode(ids), text);
}

TEST(Gpt2Tokenizer, RoundTripsWhenTextIsWikiText2) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const std::string text =
      read_text_file(test::shared_data("wikitext-2/wiki.valid.tokens")).substr(0, 5000);
  EXPECT_EQ(gpt2().decode(gpt2().encode(text)), text);
}

TEST(Gpt2Tokenizer, RoundTripsWhenTextIsNotAsciiOrNotUtf8) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  for (const std::string& text : std::vector<std::string>{
           "café naïve — 東京", "Ωμέγα Москва ½ ²³ 😀!",
           std::string("bad \xff\xfe utf8 \xe6\x9d", 15), std::string("nul\0byte\t\r\n  \n", 15)}) {
    EXPECT_EQ(gpt2().decode(gpt2().encode(text)), text);
  }
}

TEST(Gpt2Tokenizer, ThrowsWhenIdIsOutOfRange) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const std::string msg = data_error_of([] { gpt2().decode({15496, 50257}); });
  EXPECT_NE(msg.find("50257"), std::string::npos) << msg;
}

TEST(Gpt2Tokenizer, ThrowsNamingTheFileWhenVocabFilesAreMissingOrMalformed) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const std::string enc = test::shared_data("vocab/gpt2-encoder.json");
  const std::string bpe = test::shared_data("vocab/gpt2-vocab.bpe");
  test::ScratchDir dir("llmprof-data");
  const std::string bad = dir.file("bad");
  std::string msg = data_error_of([&] { make_gpt2_tokenizer(bad, bpe); });
  EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  msg = data_error_of([&] { make_gpt2_tokenizer(enc, bad); });
  EXPECT_NE(msg.find(bad), std::string::npos) << msg;

  test::write_file(bad, "{\"a\": 0, \"b\": ");
  msg = data_error_of([&] { make_gpt2_tokenizer(bad, bpe); });
  EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  test::write_file(bad, "{\"a\": 0, \"b\": 7}");
  msg = data_error_of([&] { make_gpt2_tokenizer(bad, bpe); });
  EXPECT_NE(msg.find(bad), std::string::npos) << msg;

  test::write_file(bad, "#version: 0.2\n\xc4\xa0 t\nnot-a-pair\n");
  msg = data_error_of([&] { make_gpt2_tokenizer(enc, bad); });
  EXPECT_NE(msg.find(bad + ":3:"), std::string::npos) << msg;
  test::write_file(bad, "#version: 0.2\n\xc4\xa0 t\nqqqqqqqq zzzzzzz\n");
  msg = data_error_of([&] { make_gpt2_tokenizer(enc, bad); });
  EXPECT_NE(msg.find(bad + ":3:"), std::string::npos) << msg;
}

TEST(Gpt2Tokenizer, SavesAbsolutePathsWhenSaved) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  test::ScratchDir dir("llmprof-data");
  gpt2().save(dir.path());
  const std::string json = test::read_file(dir.file("tokenizer.json"));
  EXPECT_NE(json.find("\"type\": \"gpt2\""), std::string::npos) << json;
  EXPECT_NE(json.find("gpt2-encoder.json"), std::string::npos) << json;
  EXPECT_NE(json.find("gpt2-vocab.bpe"), std::string::npos) << json;
}

TEST(MakeTokenizer, BuildsGpt2WhenConfigNamesIt) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  config::DataConfig cfg;
  cfg.tokenizer = config::TokenizerKind::kGpt2;
  cfg.vocab_path = test::shared_data("vocab/gpt2-encoder.json");
  cfg.merges_path = test::shared_data("vocab/gpt2-vocab.bpe");
  auto tok = make_tokenizer(cfg, "");
  EXPECT_EQ(tok->vocab_size(), 50257);
  EXPECT_EQ(tok->encode("Hello world"), (Ids{15496, 995}));
}

}  // namespace
}  // namespace llmprof::data
