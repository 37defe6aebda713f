#include "unicode.h"

#include <gtest/gtest.h>

#include <string>

#include "unicode_table.h"

namespace llmprof::data::detail {
namespace {

using Pieces = std::vector<std::string_view>;

// The class of the first code point of a UTF-8 string.
CharClass class_of(std::string_view s) {
  size_t len = 0;
  return classify(decode_utf8(s, 0, &len));
}

TEST(Classify, MatchesUnicodeCategoriesWhenCharsAreKnown) {
  EXPECT_EQ(class_of("a"), CharClass::kLetter);
  EXPECT_EQ(class_of("7"), CharClass::kNumber);
  EXPECT_EQ(class_of("\t"), CharClass::kSpace);
  EXPECT_EQ(class_of("_"), CharClass::kOther);
  EXPECT_EQ(class_of("é"), CharClass::kLetter);
  EXPECT_EQ(class_of("Ж"), CharClass::kLetter);
  EXPECT_EQ(class_of("東"), CharClass::kLetter);
  EXPECT_EQ(class_of("²"), CharClass::kNumber);  // No
  EXPECT_EQ(class_of("٣"), CharClass::kNumber);  // Arabic-Indic digit
  EXPECT_EQ(class_of("Ⅻ"), CharClass::kNumber);  // Nl
  EXPECT_EQ(class_of("\u3000"), CharClass::kSpace);
  EXPECT_EQ(class_of("\u00a0"), CharClass::kSpace);
  EXPECT_EQ(class_of("\u0301"), CharClass::kOther);  // combining acute: Mn
  EXPECT_EQ(class_of("ि"), CharClass::kOther);       // Devanagari vowel sign: Mc
  EXPECT_EQ(class_of("—"), CharClass::kOther);
  EXPECT_EQ(class_of("😀"), CharClass::kOther);
}

TEST(Classify, HasASortedDisjointTable) {
  const auto& t = unicode_table::kRanges;
  for (size_t i = 0; i < std::size(t); ++i) {
    ASSERT_LE(t[i].lo, t[i].hi) << i;
    if (i > 0) ASSERT_LT(t[i - 1].hi, t[i].lo) << i;
  }
}

TEST(DecodeUtf8, GivesReplacementOfLengthOneWhenBytesAreInvalid) {
  size_t len = 0;
  EXPECT_EQ(decode_utf8("\xe6\x9d\xb1", 0, &len), 0x6771u);  // 東
  EXPECT_EQ(len, 3u);
  for (std::string bad : {"\xff", "\x80", "\xe6\x9d", "\xc0\xaf", "\xed\xa0\x80"}) {
    EXPECT_EQ(decode_utf8(bad, 0, &len), 0xFFFDu) << bad;
    EXPECT_EQ(len, 1u);
  }
  std::string out;
  append_utf8(out, 0x6771);
  append_utf8(out, 0x1F600);
  EXPECT_EQ(out, "東😀");
}

TEST(Gpt2Pretokenize, SplitsLikeEncoderPy) {
  // Expected pieces from OpenAI's encoder.py pattern run by Python's `regex` module.
  EXPECT_EQ(gpt2_pretokenize("I'm here, aren't you?  Yes!!"),
            (Pieces{"I", "'m", " here", ",", " aren", "'t", " you", "?", " ", " Yes", "!!"}));
  EXPECT_EQ(gpt2_pretokenize("a \n\n b  12x\t"),
            (Pieces{"a", " \n\n", " b", " ", " 12", "x", "\t"}));
  EXPECT_EQ(gpt2_pretokenize("café naïve — 東京"), (Pieces{"café", " naïve", " —", " 東京"}));
  EXPECT_EQ(gpt2_pretokenize("हिन्दी পাঠ ১২৩ ภาษาไทย"),
            (Pieces{"ह", "ि", "न", "्", "द", "ी", " প", "া", "ঠ", " ১২৩", " ภาษาไทย"}));
  EXPECT_EQ(gpt2_pretokenize("x²+y³ ①Ⅻ\u3000東京\u00a0a"),
            (Pieces{"x", "²", "+", "y", "³", " ①Ⅻ", "\u3000", "東京", "\u00a0", "a"}));
  EXPECT_TRUE(gpt2_pretokenize("").empty());
}

TEST(Gpt2Pretokenize, ConcatenatesBackToTheTextWhenBytesAreInvalid) {
  const std::string text("ab \xff\xfe  \xe6\x9d 'll\n", 14);
  std::string joined;
  for (auto p : gpt2_pretokenize(text)) joined += p;
  EXPECT_EQ(joined, text);
}

}  // namespace
}  // namespace llmprof::data::detail
