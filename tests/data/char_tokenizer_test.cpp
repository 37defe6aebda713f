#include <gtest/gtest.h>

#include <string>

#include "llmprof/config/config.h"
#include "llmprof/data/corpus.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::data {
namespace {

using test::data_error_of;

TEST(CharTokenizer, HasSortedDistinctBytesAsVocabulary) {
  auto tok = make_char_tokenizer("hello world");
  EXPECT_EQ(tok->name(), "char");
  EXPECT_EQ(tok->vocab_size(), 8);  // ' ' d e h l o r w
  EXPECT_EQ(tok->encode(" dehlorw"), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(tok->encode("hello"), (std::vector<int32_t>{3, 2, 4, 4, 5}));
}

TEST(CharTokenizer, HasVocab65AndRoundTripsWhenCorpusIsTinyShakespeare) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const std::string text = read_text_file(test::shared_data("tinyshakespeare.txt"));
  ASSERT_EQ(text.size(), 1115394u);
  auto tok = make_char_tokenizer(text);
  EXPECT_EQ(tok->vocab_size(), 65);
  const auto ids = tok->encode(text);
  ASSERT_EQ(ids.size(), text.size());
  EXPECT_EQ(ids[0], tok->encode("F")[0]);
  EXPECT_EQ(tok->decode(ids), text);
  EXPECT_EQ(tok->encode("\n")[0], 0);  // nanoGPT's meta.pkl: '\n' 0, ' ' 1, ... 'z' 64
  EXPECT_EQ(tok->encode(" ")[0], 1);
  EXPECT_EQ(tok->encode("z")[0], 64);
}

TEST(CharTokenizer, RoundTripsWhenSavedAndLoaded) {
  const std::string text = generate_corpus(5, 20000);
  auto tok = make_char_tokenizer(text);
  test::ScratchDir dir("llmprof-data");
  tok->save(dir.path());
  EXPECT_NE(test::read_file(dir.file("vocab.json")).find("\"type\":\"char\""), std::string::npos);
  auto loaded = load_char_tokenizer(dir.path());
  EXPECT_EQ(loaded->vocab_size(), tok->vocab_size());
  EXPECT_EQ(loaded->encode(text), tok->encode(text));
  EXPECT_EQ(loaded->decode(tok->encode(text)), text);
}

TEST(CharTokenizer, NamesCharAndOffsetWhenCharIsUnknown) {
  auto tok = make_char_tokenizer("abc");
  std::string msg = data_error_of([&] { tok->encode("abcaZb"); });
  EXPECT_NE(msg.find("'Z'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("offset 4"), std::string::npos) << msg;
  msg = data_error_of([&] { tok->encode(std::string("ab\x01", 3)); });
  EXPECT_NE(msg.find("\\x01"), std::string::npos) << msg;
  EXPECT_NE(msg.find("offset 2"), std::string::npos) << msg;
}

TEST(CharTokenizer, ThrowsWhenIdIsOutOfRange) {
  auto tok = make_char_tokenizer("abc");
  std::string msg = data_error_of([&] { tok->decode({0, 3}); });
  EXPECT_NE(msg.find("id 3"), std::string::npos) << msg;
  EXPECT_THROW(tok->decode({-1}), DataError);
}

TEST(CharTokenizer, ThrowsNamingTheFileWhenVocabIsMalformed) {
  test::ScratchDir dir("llmprof-data");
  std::string msg = data_error_of([&] { load_char_tokenizer(dir.path()); });  // missing
  EXPECT_NE(msg.find(dir.file("vocab.json")), std::string::npos) << msg;
  for (const char* bad :
       {"{not json", "{\"type\":\"gpt2\",\"chars\":[97]}", "{\"type\":\"char\",\"chars\":[]}",
        "{\"type\":\"char\",\"chars\":[97,300]}", "{\"type\":\"char\",\"chars\":[97,97]}",
        "[1,2]"}) {
    test::write_file(dir.file("vocab.json"), bad);
    msg = data_error_of([&] { load_char_tokenizer(dir.path()); });
    EXPECT_NE(msg.find(dir.file("vocab.json")), std::string::npos) << bad << ": " << msg;
  }
}

TEST(MakeTokenizer, BuildsCharAndRejectsUnknownNames) {
  config::DataConfig cfg;
  cfg.tokenizer = config::TokenizerKind::kChar;
  EXPECT_EQ(make_tokenizer(cfg, "abcabc")->vocab_size(), 3);
  cfg.tokenizer = config::TokenizerKind::kWordpiece;
  std::string msg = data_error_of([&] { make_tokenizer(cfg, "abc"); });
  EXPECT_NE(msg.find("wordpiece"), std::string::npos) << msg;
  cfg.tokenizer = config::TokenizerKind::kGpt2;  // no paths
  msg = data_error_of([&] { make_tokenizer(cfg, "abc"); });
  EXPECT_NE(msg.find("data.vocab_path"), std::string::npos) << msg;
}

}  // namespace
}  // namespace llmprof::data
