#include "llmprof/data/wordpiece.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "llmprof/config/config.h"
#include "llmprof/error.h"
#include "support/test_support.h"
#include "unicode.h"

namespace llmprof::data {
namespace {

using Ids = std::vector<int32_t>;

// BERT-base uncased's vocab.txt from shared/data, loaded once for the suite. Every id expected
// below was read off that file (line n holds id n - 1), e.g. `grep -nxF hello vocab.txt` -> 7593.
const WordPieceTokenizer& bert() {
  static const auto tok =
      make_wordpiece_tokenizer(test::shared_data("vocab/bert-base-uncased-vocab.txt"));
  return *tok;
}

using test::data_error_of;

// A tiny vocabulary: the five specials, then pieces for the greedy-match tests.
constexpr const char* kTinyVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nun\nuna\n##ff\n##ffa\n##able\n##ble\n##a\nhug\n##s\n,\n";

TEST(WordPieceTokenizer, HasBertSpecialIdsWhenVocabIsBertBaseUncased) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(bert().name(), "wordpiece");
  EXPECT_EQ(bert().vocab_size(), 30522);
  const SpecialTokens sp = bert().special();
  EXPECT_EQ(sp.pad, 0);
  EXPECT_EQ(sp.unk, 100);
  EXPECT_EQ(sp.cls, 101);
  EXPECT_EQ(sp.sep, 102);
  EXPECT_EQ(sp.mask, 103);
  EXPECT_EQ(bert().encode("the"), (Ids{1996}));
  EXPECT_EQ(bert().decode({101, 1996, 102}), "[CLS] the [SEP]");
}

TEST(WordPieceTokenizer, EncodesRealSentencesToVocabIds) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(bert().encode("Hello, world!"), (Ids{7592, 1010, 2088, 999}));  // hello , world !
  EXPECT_EQ(bert().encode("unaffable"), (Ids{14477, 20961, 3468}));         // una ##ffa ##ble
  // IMDB's HTML survives as punctuation and words: < br / > twice.
  EXPECT_EQ(bert().encode("I loved this movie!<br /><br />It was great."),
            (Ids{1045, 3866, 2023, 3185, 999, 1026, 7987, 1013, 1028, 1026, 7987, 1013, 1028, 2009,
                 2001, 2307, 1012}));
  EXPECT_EQ(bert().encode("xxxxxxxxxx!"), (Ids{22038, 20348, 20348, 20348, 20348, 999}));
  EXPECT_TRUE(bert().encode("").empty());
  EXPECT_TRUE(bert().encode("  \t\n ").empty());
}

TEST(WordPieceTokenizer, LowerCasesAndStripsAccents) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(bert().encode("Héllo"), (Ids{7592}));
  EXPECT_EQ(bert().encode("He\xCC\x81llo"), (Ids{7592}));  // e + U+0301, already decomposed
  EXPECT_EQ(bert().encode("Café naïve résumés"), (Ids{7668, 15743, 13746, 2015}));  // ##s
  EXPECT_EQ(bert().encode("İstanbul"), (Ids{9960}));   // U+0130 lowers to i + U+0307
  EXPECT_EQ(bert().encode("ﬁne"), (Ids{1984, 2638}));  // U+FB01 has no canonical decomposition
}

TEST(WordPieceTokenizer, SplitsPunctuationAndCjkCharacters) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(bert().encode("don't"), (Ids{2123, 1005, 1056}));  // don ' t
  EXPECT_EQ(bert().encode("中国人"), (Ids{1746, 1799, 1756}));
  EXPECT_EQ(bert().encode("ab中cd"), (Ids{11113, 1746, 3729}));  // ab 中 cd
  // Special-token text is ordinary text, split as google's tokenizer does: [ mask ].
  EXPECT_EQ(bert().encode("[MASK]"), (Ids{1031, 7308, 1033}));
}

TEST(WordPieceTokenizer, LowersGreekSigmaByPythonsFinalSigmaRule) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(bert().encode("ΟΔΟΣ"), (Ids{1169, 29722, 15297}));         // ο ##δ ##ος (final ς)
  EXPECT_EQ(bert().encode("ΟΔΟΣ."), (Ids{1169, 29722, 15297, 1012}));  // '.' is case-ignorable
  EXPECT_EQ(bert().encode("οδοσ"), (Ids{1169, 29722, 29730, 29733}));  // ο ##δ ##ο ##σ
  EXPECT_EQ(bert().encode("ΣΑ"), (Ids{1173, 14608}));                  // σ ##α: nothing before
}

TEST(WordPieceTokenizer, DropsControlsAndInvalidUtf8AndSplitsOnUnicodeSpace) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  // U+0000, U+200B (Cf) and U+FFFD vanish, joining "a", "b", "c" into one word.
  EXPECT_EQ(bert().encode(std::string("a\0b\xE2\x80\x8B"
                                      "c\xEF\xBF\xBD",
                                      10)),
            (Ids{5925}));
  EXPECT_EQ(bert().encode("hello\xFFworld"), (Ids{7592, 11108}));  // hello ##world
  // TAB, LF, U+00A0 and U+3000 all separate words.
  EXPECT_EQ(bert().encode("the\tthe\nthe\xC2\xA0the\xE3\x80\x80the"),
            (Ids{1996, 1996, 1996, 1996, 1996}));
}

TEST(WordPieceTokenizer, DecomposesHangulIntoJamo) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(bert().encode("한"), (Ids{1469, 30006, 30021}));  // ᄒ ##ᅡ ##ᆫ
}

TEST(WordPieceTokenizer, GivesUnkWhenWordExceeds100Chars) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(bert().encode(std::string(101, 'a')), (Ids{100}));
  EXPECT_EQ(bert().encode("the " + std::string(101, 'a') + " the"), (Ids{1996, 100, 1996}));
  // 100 characters still split: aaa, then 48 x ##aa, then ##a.
  const Ids ids = bert().encode(std::string(100, 'a'));
  ASSERT_EQ(ids.size(), 50u);
  EXPECT_EQ(ids.front(), 13360);
  EXPECT_EQ(ids[1], 11057);
  EXPECT_EQ(ids.back(), 2050);
  EXPECT_EQ(bert().decode(ids), std::string(100, 'a'));
}

TEST(WordPieceTokenizer, DecodesByJoiningWordsAndGluingContinuations) {
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  EXPECT_EQ(bert().decode(bert().encode("Unaffable, world!")), "unaffable , world !");
  EXPECT_EQ(bert().decode({}), "");
  const std::string msg = data_error_of([] { bert().decode({1996, 30522}); });
  EXPECT_NE(msg.find("id 30522 at position 1 is outside [0, 30522)"), std::string::npos) << msg;
}

TEST(WordPieceTokenizer, MatchesLongestPieceFirstWhenVocabIsTiny) {
  test::ScratchDir dir("wordpiece");
  test::write_file(dir.file("vocab.txt"), kTinyVocab);
  const auto tok = make_wordpiece_tokenizer(dir.file("vocab.txt"));
  EXPECT_EQ(tok->vocab_size(), 15);
  const SpecialTokens sp = tok->special();
  EXPECT_EQ(sp.pad, 0);
  EXPECT_EQ(sp.unk, 1);
  EXPECT_EQ(sp.cls, 2);
  EXPECT_EQ(sp.sep, 3);
  EXPECT_EQ(sp.mask, 4);
  // "una" beats "un", then "##ffa" beats "##ff", leaving "##ble" (not "##a" + ...).
  EXPECT_EQ(tok->encode("unaffable"), (Ids{6, 8, 10}));
  EXPECT_EQ(tok->encode("Hugs, UN"), (Ids{12, 13, 14, 5}));  // hug ##s , un
  // No piece for "x": the whole word is one [UNK], never "un" + [UNK].
  EXPECT_EQ(tok->encode("unx hug"), (Ids{1, 12}));
  EXPECT_EQ(tok->encode("ffa"), (Ids{1}));  // "##ffa" only continues a word
  EXPECT_EQ(tok->decode({6, 8, 10, 14, 12, 13}), "unaffable , hugs");
}

TEST(WordPieceTokenizer, SavesTypeAndAbsoluteVocabPath) {
  test::ScratchDir dir("wordpiece");
  test::write_file(dir.file("vocab.txt"), kTinyVocab);
  const auto tok = make_wordpiece_tokenizer(dir.file("vocab.txt"));
  tok->save(dir.file("out"));
  const auto j = nlohmann::json::parse(test::read_file(dir.file("out/tokenizer.json")));
  EXPECT_EQ(j.at("type"), "wordpiece");
  EXPECT_EQ(j.at("vocab_path"), dir.file("vocab.txt"));
  EXPECT_EQ(j.at("vocab_size"), 15);
}

TEST(WordPieceTokenizer, ThrowsNamingTheFileWhenVocabIsBad) {
  test::ScratchDir dir("wordpiece");
  const std::string path = dir.file("vocab.txt");
  std::string msg = data_error_of([&] { make_wordpiece_tokenizer(path); });
  EXPECT_NE(msg.find("not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;

  test::write_file(path, "");
  msg = data_error_of([&] { make_wordpiece_tokenizer(path); });
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;

  test::write_file(path, "[PAD]\n[UNK]\nthe\n[CLS]\nthe\n");
  msg = data_error_of([&] { make_wordpiece_tokenizer(path); });
  EXPECT_NE(msg.find(path + ":5: duplicate token 'the' (first at line 3)"), std::string::npos)
      << msg;

  test::write_file(path, "[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n");
  msg = data_error_of([&] { make_wordpiece_tokenizer(path); });
  EXPECT_NE(msg.find(path + ": special token [MASK] is missing"), std::string::npos) << msg;

  test::write_file(path, "[PAD]\n\n[UNK]\n");
  msg = data_error_of([&] { make_wordpiece_tokenizer(path); });
  EXPECT_NE(msg.find(path + ":2: blank line"), std::string::npos) << msg;
}

TEST(MakeTokenizer, BuildsWordPieceFromVocabPath) {
  test::ScratchDir dir("wordpiece");
  test::write_file(dir.file("vocab.txt"), kTinyVocab);
  config::DataConfig cfg;
  cfg.tokenizer = config::TokenizerKind::kWordpiece;
  cfg.vocab_path = dir.file("vocab.txt");
  const auto tok = make_tokenizer(cfg, "");
  EXPECT_EQ(tok->name(), "wordpiece");
  EXPECT_EQ(tok->encode("hugs"), (Ids{12, 13}));
  cfg.vocab_path.clear();
  const std::string msg = data_error_of([&] { make_tokenizer(cfg, ""); });
  EXPECT_NE(msg.find("data.vocab_path"), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------------------------
// The Unicode tables behind it (unicode.h).

// fold of one code point as a vector.
std::vector<uint32_t> fold(uint32_t cp) {
  uint32_t out[3];
  const int n = detail::bert_fold(cp, out);
  return std::vector<uint32_t>(out, out + n);
}

TEST(BertUnicode, FoldsLowerCaseAndStripsMarks) {
  using V = std::vector<uint32_t>;
  EXPECT_EQ(fold('A'), V{'a'});
  EXPECT_EQ(fold(0xC9), V{'e'});              // É
  EXPECT_EQ(fold(0x1E9E), V{0xDF});           // ẞ -> ß
  EXPECT_EQ(fold(0x130), V{'i'});             // İ -> i + U+0307 -> i
  EXPECT_EQ(fold(0x1F88), V{0x3B1});          // ᾈ -> ᾀ -> α + U+0313 + U+0345, both Mn
  EXPECT_EQ(fold(0x9CB), (V{0x9C7, 0x9BE}));  // Bengali vowel sign O: two spacing marks (Mc)
  EXPECT_EQ(fold(0x301), V{});                // a combining acute on its own vanishes
  EXPECT_EQ(fold(0xD55C), (V{0x1112, 0x1161, 0x11AB}));  // 한 -> ᄒ ᅡ ᆫ
  EXPECT_EQ(fold(0xAC00), (V{0x1100, 0x1161}));          // 가: no trailing jamo
  EXPECT_EQ(fold(0xF900), V{0x8C48});  // a CJK compatibility ideograph's canonical form
}

TEST(BertUnicode, FlagsSpacesControlsPunctuationAndCjk) {
  using detail::bert_flags;
  EXPECT_TRUE(bert_flags('\t') & detail::kBertSpace);
  EXPECT_TRUE(bert_flags(0x2029) & detail::kBertSpace);   // split by Python's str.split()
  EXPECT_TRUE(bert_flags(0x0B) & detail::kBertDrop);      // VT: a control, not white space
  EXPECT_TRUE(bert_flags(0xE000) & detail::kBertDrop);    // private use (Co)
  EXPECT_TRUE(bert_flags('$') & detail::kBertPunct);      // ASCII symbol, treated as punctuation
  EXPECT_TRUE(bert_flags(0x2014) & detail::kBertPunct);   // em dash (Pd)
  EXPECT_FALSE(bert_flags(0x20AC) & detail::kBertPunct);  // € is Sc, not punctuation
  EXPECT_TRUE(bert_flags(0x4E2D) & detail::kBertCjk);
  EXPECT_FALSE(bert_flags(0x3042) & detail::kBertCjk);  // Hiragana is not in the CJK block
  EXPECT_EQ(bert_flags('a'), detail::kBertCased);
}

}  // namespace
}  // namespace llmprof::data
