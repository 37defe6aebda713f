#include "llmprof/data/corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::data {
namespace {

TEST(GenerateCorpus, IsIdenticalWhenSeedIsTheSame) {
  EXPECT_EQ(generate_corpus(7, 50000), generate_corpus(7, 50000));
  EXPECT_NE(generate_corpus(7, 50000), generate_corpus(8, 50000));
}

TEST(GenerateCorpus, HasExactlyTheRequestedLength) {
  for (int64_t n : {0, 1, 17, 1000, 123457}) EXPECT_EQ(generate_corpus(1, n).size(), size_t(n));
}

TEST(GenerateCorpus, IsAPrefixOfALongerCorpusWhenSeedIsTheSame) {
  const std::string long_text = generate_corpus(3, 20000);
  EXPECT_EQ(generate_corpus(3, 5000), long_text.substr(0, 5000));
}

TEST(GenerateCorpus, HoldsOnlyPrintableAsciiAndNewlines) {
  const std::string text = generate_corpus(1337, 200000);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    ASSERT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7F)) << "byte " << int(c) << " at " << i;
  }
}

TEST(GenerateCorpus, LooksLikeAPlayScript) {
  const std::string text = generate_corpus(1337, 100000);
  EXPECT_EQ(text.rfind("SCENE 1. ", 0), 0u) << text.substr(0, 80);
  EXPECT_NE(text.find("\n\nKING:\n"), std::string::npos);  // a speaker after a blank line
  EXPECT_NE(text.find(", "), std::string::npos);
  EXPECT_NE(text.find("?\n"), std::string::npos);
  EXPECT_NE(text.find(" the "), std::string::npos);
  std::set<char> distinct(text.begin(), text.end());
  EXPECT_GE(distinct.size(), 40u);  // letters of both cases, punctuation, space, newline
  EXPECT_LE(distinct.size(), 96u);
}

TEST(GenerateCorpus, HasRepeatedStructureWhenMeasuredByUnigramEntropy) {
  // A char model must beat ln(vocab) by a wide margin. The unigram entropy is an upper bound
  // on what a model conditioning on context reaches, so it must already be well below ln(V).
  const std::string text = generate_corpus(1, 200000);
  double counts[256] = {};
  for (char c : text) counts[static_cast<unsigned char>(c)] += 1;
  double entropy_nats = 0;
  int vocab = 0;
  for (double n : counts) {
    if (n == 0) continue;
    ++vocab;
    const double p = n / static_cast<double>(text.size());
    entropy_nats -= p * std::log(p);
  }
  EXPECT_LT(entropy_nats, std::log(static_cast<double>(vocab)) - 0.5)
      << "entropy " << entropy_nats << " nats, ln(V) " << std::log(double(vocab));
}

TEST(ReadTextFile, ReturnsTheBytesWhenFileExists) {
  test::ScratchDir dir("llmprof-data");
  test::write_file(dir.file("a.txt"), "hello\nworld\n");
  EXPECT_EQ(read_text_file(dir.file("a.txt")), "hello\nworld\n");
}

TEST(ReadTextFile, ThrowsNamingThePathWhenMissingOrEmpty) {
  test::ScratchDir dir("llmprof-data");
  const std::string missing = dir.file("nope.txt");
  try {
    read_text_file(missing);
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos) << e.what();
  }
  test::write_file(dir.file("empty.txt"), "");
  try {
    read_text_file(dir.file("empty.txt"));
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("empty.txt")), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_text_file(dir.path()), DataError);  // a directory
}

}  // namespace
}  // namespace llmprof::data
