// A tokenizer's fingerprint: SHA-256 against FIPS 180-4's published vectors (and Python hashlib's
// digests at the padding boundaries, 55/56/64 bytes), then the hash of what maps text to ids: the
// same vocabulary from another file or in another JSON layout hashes the same, one of the same
// size with other content does not, and save_files gives back the same tokenizer.
#include "tokenizer_fingerprint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "llmprof/config/config.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/data/wordpiece.h"
#include "support/test_support.h"

namespace llmprof::data {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

std::string fixture(const std::string& file) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/checkpoint/fixtures/hf/" + file;
}

TEST(Sha256, GivesThePublishedDigests) {
  EXPECT_EQ(detail::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(detail::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(detail::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(detail::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55 bytes: the length fits the last block; 56: it takes one more; 64: a whole block of data.
  EXPECT_EQ(detail::sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(detail::sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(detail::sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

std::unique_ptr<Tokenizer> gpt2(const std::string& vocab, const std::string& merges) {
  return make_gpt2_tokenizer(vocab, merges);
}

TEST(TokenizerFingerprint, Gpt2VocabularyInAnotherFileAndLayoutHashesTheSame) {
  ScratchDir dir;
  const auto original = gpt2(fixture("gpt2_tiny/vocab.json"), fixture("gpt2_tiny/merges.txt"));
  // The same token -> id map written by another writer: indented, keys sorted.
  const nlohmann::json vocab =
      nlohmann::json::parse(test::read_file(fixture("gpt2_tiny/vocab.json")));
  test::write_file(dir.file("encoder.json"), vocab.dump(4));
  test::write_file(dir.file("vocab.bpe"), test::read_file(fixture("gpt2_tiny/merges.txt")));
  const auto copy = gpt2(dir.file("encoder.json"), dir.file("vocab.bpe"));
  ASSERT_EQ(original->fingerprint().size(), 64u);
  EXPECT_EQ(copy->fingerprint(), original->fingerprint());
}

TEST(TokenizerFingerprint, Gpt2VocabularyOfTheSameSizeWithOtherIdsDiffers) {
  ScratchDir dir;
  nlohmann::json vocab = nlohmann::json::parse(test::read_file(fixture("gpt2_tiny/vocab.json")));
  // Two tokens trade ids: same size, same tokens, other content.
  const std::string a = "a", b = "b";
  const auto id_a = vocab[a].get<int>(), id_b = vocab[b].get<int>();
  vocab[a] = id_b;
  vocab[b] = id_a;
  test::write_file(dir.file("vocab.json"), vocab.dump());
  const auto original = gpt2(fixture("gpt2_tiny/vocab.json"), fixture("gpt2_tiny/merges.txt"));
  const auto swapped = gpt2(dir.file("vocab.json"), fixture("gpt2_tiny/merges.txt"));
  ASSERT_EQ(swapped->vocab_size(), original->vocab_size());
  EXPECT_NE(swapped->fingerprint(), original->fingerprint());
}

TEST(TokenizerFingerprint, WordPieceOfTheSameSizeWithOtherContentOrCaseDiffers) {
  ScratchDir dir;
  std::string text = test::read_file(fixture("distilbert_tiny/vocab.txt"));
  const size_t cat = text.find("cat\n"), dog = text.find("dog\n");
  ASSERT_NE(cat, std::string::npos);
  ASSERT_NE(dog, std::string::npos);
  text.replace(dog, 3, "cat");
  text.replace(cat, 3, "dog");
  test::write_file(dir.file("vocab.txt"), text);
  const auto original = make_wordpiece_tokenizer(fixture("distilbert_tiny/vocab.txt"), true);
  const auto swapped = make_wordpiece_tokenizer(dir.file("vocab.txt"), true);
  const auto cased = make_wordpiece_tokenizer(fixture("distilbert_tiny/vocab.txt"), false);
  ASSERT_EQ(swapped->vocab_size(), original->vocab_size());
  EXPECT_NE(swapped->fingerprint(), original->fingerprint());
  EXPECT_NE(cased->fingerprint(), original->fingerprint());
  EXPECT_EQ(make_wordpiece_tokenizer(fixture("distilbert_tiny/vocab.txt"), true)->fingerprint(),
            original->fingerprint());
}

TEST(TokenizerSaveFiles, RebuildTheSameTokenizerFromTheData) {
  ScratchDir dir;
  const std::string text = "The cats sat on a mat. Dogs run!";
  config::DataConfig gpt;
  gpt.tokenizer = config::TokenizerKind::kGpt2;
  gpt.vocab_path = fixture("gpt2_tiny/vocab.json");
  gpt.merges_path = fixture("gpt2_tiny/merges.txt");
  config::DataConfig bert;
  bert.tokenizer = config::TokenizerKind::kWordpiece;
  bert.vocab_path = fixture("distilbert_tiny/vocab.txt");
  bert.lower_case = true;
  config::DataConfig chars;
  chars.tokenizer = config::TokenizerKind::kChar;
  for (const config::DataConfig& d : {gpt, bert, chars}) {
    const auto tok = make_tokenizer(d, text);
    const std::string out = dir.file(tok->name());
    fs::create_directories(out);
    const std::vector<std::string> files = tok->save_files(out);
    ASSERT_FALSE(files.empty());
    config::DataConfig again = d;
    again.vocab_path = out + "/" + files[0];
    if (files.size() > 1 && d.tokenizer == config::TokenizerKind::kGpt2) {
      again.merges_path = out + "/" + files[1];
    }
    // The char vocabulary comes from the saved file, not from this (other) corpus.
    const auto rebuilt = make_tokenizer(again, "zzz");
    EXPECT_EQ(rebuilt->fingerprint(), tok->fingerprint()) << tok->name();
    EXPECT_EQ(rebuilt->encode(text), tok->encode(text)) << tok->name();
  }
}

}  // namespace
}  // namespace llmprof::data
