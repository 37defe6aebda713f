// The tokenizer.json tokenizer: ids against scripts/hf/tokenizer_reference.py (an independent
// Python implementation, run here when python3 and its `regex` module are present), ids worked out
// by hand, round trips, NFC, and the errors a user meets.
#include "llmprof/data/hf_tokenizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "hf_tokenizer_fixtures.h"
#include "hf_tokenizer_parts.h"
#include "llmprof/config/config.h"
#include "llmprof/data/corpus.h"
#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::data {
namespace {

using Ids = std::vector<int32_t>;
using test::data_error_of;

// The byte-level shapes' Split, Digits and ByteLevel patterns need PCRE2 in the build.
#define LLMPROF_SKIP_WITHOUT_PCRE2()                                                  \
  do {                                                                                \
    if (!hf_tokenizer_regex_available())                                              \
      GTEST_SKIP() << "built without PCRE2 (libpcre2-dev): regex tokenizers skipped"; \
  } while (0)
using test::expect_contains;

// Strings where tokenizers differ: contractions, digit runs longer than 3, CJK, emoji, trailing
// and repeated spaces, "\n\n", mixed scripts, combining marks (NFC), special tokens inline.
const std::vector<std::string>& hard_strings() {
  static const std::vector<std::string> s = {
      "Hello world",
      "I'm here, don't you're we'VE they'LL he'd",
      "1234567 and 89 or 12345",
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83"
      "\x88",
      "emoji \xF0\x9F\xA4\x96\xF0\x9F\x8E\x89 ok \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
      "trailing spaces   ",
      "a\n\nb\n\n\nc",
      "caf\xC3\xA9 cafe\xCC\x81 na\xC3\xAFve "
      "\xCE\x95\xCE\xBB\xCE\xBB\xCE\xB7\xCE\xBD\xCE\xB9\xCE\xBA\xCE\xAC "
      "\xD1\x80\xD1\x83\xD1\x81\xD1\x81\xD0\xBA\xD0\xB8\xD0\xB9 \xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A",
      "  leading and\ttab\r\nwindows  \n  x",
      "",
      " ",
      "the<|begin_of_text|>the <|endoftext|> <s>Hello</s>",
      "!!! ... ??? --- ***",
      "hello Hello HELLO",
  };
  return s;
}

bool have_python_reference() {
  static const bool ok = std::system("timeout 30 python3 -c 'import regex' >/dev/null 2>&1") == 0;
  return ok;
}

// The reference's ids for texts under tokenizer_json (add_special_tokens unless plain).
std::vector<Ids> reference_ids(const std::string& tokenizer_json,
                               const std::vector<std::string>& texts,
                               const test::ScratchDir& dir,
                               bool plain = false) {
  test::write_file(dir.file("texts.json"), nlohmann::json(texts).dump());
  const std::string cmd = "timeout 120 python3 " + std::string(LLMPROF_SOURCE_DIR) +
                          "/scripts/hf/tokenizer_reference.py " + tokenizer_json +
                          (plain ? " --plain" : "") + " < " + dir.file("texts.json") + " > " +
                          dir.file("ids.json");
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  if (rc != 0) return {};
  return nlohmann::json::parse(test::read_file(dir.file("ids.json"))).get<std::vector<Ids>>();
}

// Writes the fixture, loads it, and checks every hard string against the reference.
// LLMPROF_KEEP_HF_FIXTURES=DIR also writes it to DIR/<name>.json (for
// scripts/hf/check_tokenizer_ids.py against the tokenizers library).
void expect_reference_ids(const nlohmann::json& fixture, const std::string& name, bool byte_level) {
  test::ScratchDir dir("hf_tok");
  const std::string path = dir.file("tokenizer.json");
  test::write_file(path, fixture.dump(1));
  if (const char* keep = std::getenv("LLMPROF_KEEP_HF_FIXTURES")) {
    test::write_file(std::string(keep) + "/" + name + ".json", fixture.dump(1));
  }
  const auto tok = load_hf_tokenizer(path);
  if (!have_python_reference()) {
    GTEST_SKIP() << "python3 with the `regex` module (Debian python3-regex) is absent: "
                    "reference comparison skipped";
  }
  const std::vector<Ids> expected = reference_ids(path, hard_strings(), dir);
  const std::vector<Ids> plain = reference_ids(path, hard_strings(), dir, true);
  ASSERT_EQ(expected.size(), hard_strings().size());
  for (size_t i = 0; i < hard_strings().size(); ++i) {
    const std::string& s = hard_strings()[i];
    EXPECT_EQ(tok->encode(s), expected[i]) << "text " << i << ": '" << s << "'";
    EXPECT_EQ(tok->encode_plain(s), plain[i]) << "text " << i << ": '" << s << "'";
    // Byte-level BPE loses nothing but the special tokens decode drops and what NFC changes.
    if (byte_level && s.find('<') == std::string::npos) {
      EXPECT_EQ(tok->decode(tok->encode(s)), name == "qwen2" ? detail::nfc(s) : s) << "text " << i;
    }
  }
}

TEST(HfTokenizer, MatchesReferenceWhenLlama3Style) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  expect_reference_ids(test::llama3_tokenizer(), "llama3", true);
}
TEST(HfTokenizer, MatchesReferenceWhenQwen2Style) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  expect_reference_ids(test::qwen2_tokenizer(), "qwen2", true);
}
TEST(HfTokenizer, MatchesReferenceWhenSmolLm2Style) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  expect_reference_ids(test::smollm2_tokenizer(), "smollm2", true);
}
TEST(HfTokenizer, MatchesReferenceWhenTinyLlamaStyle) {
  expect_reference_ids(test::tinyllama_tokenizer(), "tinyllama", false);
}
TEST(HfTokenizer, MatchesReferenceWhenMistralMetaspaceStyle) {
  expect_reference_ids(test::mistral_tokenizer(), "mistral", false);
}

// Loads a fixture from a scratch file.
struct Loaded {
  test::ScratchDir dir{"hf_tok"};
  std::unique_ptr<HfTokenizer> tok;
  explicit Loaded(const nlohmann::json& j) {
    test::write_file(dir.file("tokenizer.json"), j.dump());
    tok = load_hf_tokenizer(dir.file("tokenizer.json"));
  }
};

int32_t id_of(const HfTokenizer& t, const std::string& token) {
  const int32_t id = t.token_to_id(token);
  EXPECT_GE(id, 0) << "no token '" << token << "'";
  return id;
}

TEST(HfTokenizer, AddsBosAndTakesWholeVocabTokensWhenLlama3IgnoresMerges) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  Loaded l(test::llama3_tokenizer());
  const HfTokenizer& t = *l.tok;
  const int32_t bos = id_of(t, "<|begin_of_text|>");
  EXPECT_EQ(t.prefix_ids(), Ids{bos});
  EXPECT_EQ(t.encode(""), Ids{bos});
  // " hello" is a vocabulary token no merge reaches: ignore_merges takes it whole.
  EXPECT_EQ(t.encode_plain(" hello"), Ids{id_of(t, test::byte_level(" hello"))});
  // \p{N}{1,3}: "12345" is split "123" + "45" before the model, so the whole token is not used.
  EXPECT_EQ(t.encode_plain("12345"), (Ids{id_of(t, "123"), id_of(t, "4"), id_of(t, "5")}));
  // Special tokens inline are cut out before pre-tokenization, and dropped by decode.
  EXPECT_EQ(t.encode_plain("he<|end_of_text|>"),
            (Ids{id_of(t, "h"), id_of(t, "e"), id_of(t, "<|end_of_text|>")}));
  EXPECT_EQ(t.decode(t.encode("Hello world")), "Hello world");

  nlohmann::json j = test::llama3_tokenizer();
  j["model"]["ignore_merges"] = false;
  Loaded merged(j);
  // No merge builds "hello": Ġ h e ll o ("ll" is one of the fixture's words).
  EXPECT_EQ(merged.tok->encode_plain(" hello").size(), 5u);
}

TEST(HfTokenizer, ComposesToNfcWhenQwen2Normalizes) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  Loaded l(test::qwen2_tokenizer());
  // "e" + U+0301 COMBINING ACUTE is "é" (U+00E9) after NFC; " café" is one token.
  EXPECT_EQ(l.tok->encode(" cafe\xCC\x81"), l.tok->encode(" caf\xC3\xA9"));
  EXPECT_EQ(l.tok->encode(" caf\xC3\xA9"), Ids{id_of(*l.tok, test::byte_level(" caf\xC3\xA9"))});
  EXPECT_TRUE(l.tok->prefix_ids().empty());
  // Hangul: the conjoining jamo U+1100 U+1161 compose to U+AC00.
  EXPECT_EQ(detail::nfc("\xE1\x84\x80\xE1\x85\xA1"), "\xEA\xB0\x80");
  // Canonical order: dot below (220) before acute (230) whatever the input order, then compose.
  EXPECT_EQ(detail::nfc("e\xCC\x81\xCC\xA3"), detail::nfc("e\xCC\xA3\xCC\x81"));
  EXPECT_EQ(detail::nfc("e\xCC\xA3\xCC\x81"), "\xE1\xBA\xB9\xCC\x81");  // ẹ + acute
  EXPECT_EQ(detail::nfc("A\xFF\xCC\x8A"), "A\xFF\xCC\x8A");  // invalid byte kept, blocks nothing
}

// NFC against Python's unicodedata.normalize on what breaks naive implementations: Hangul
// syllables and jamo, stacked Vietnamese marks in either order, composition exclusions (U+0958),
// singletons (U+212B ANGSTROM SIGN), a non-starter decomposition (U+0344), blocked marks.
TEST(HfTokenizer, ComputesNfcAsPythonWhenTextIsHard) {
  if (std::system("timeout 30 python3 -c 'import unicodedata' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 is absent: NFC comparison skipped";
  }
  const std::vector<std::string> texts = {
      "\xEA\xB0\x80\xE1\x86\xA8 \xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8",
      "Vie\xCC\xA3\xCC\x82t a\xCC\x82\xCC\xA3 o\xCC\x9B\xCC\x81",
      "\xE0\xA5\x98 \xE2\x84\xAB \xCD\x84 a\xCD\x84",
      "e\xCC\x81\xCC\x81 A\xCC\x8A\xCC\x81 a\xCC\xB8\xCC\x81 \xC3\x85\xCC\xA3",
      "\xE1\xBE\xB7 \xCE\xB1\xCD\x85\xCD\x82 \xE3\x81\x8B\xE3\x82\x99 \xEF\xAC\x80"};
  test::ScratchDir dir("nfc");
  test::write_file(dir.file("in.json"), nlohmann::json(texts).dump());
  const std::string cmd =
      "timeout 60 python3 -c \"import json,sys,unicodedata as u; "
      "print(json.dumps([u.normalize('NFC', t) for t in json.load(open(sys.argv[1]))]))\" " +
      dir.file("in.json") + " > " + dir.file("out.json");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto expected =
      nlohmann::json::parse(test::read_file(dir.file("out.json"))).get<std::vector<std::string>>();
  ASSERT_EQ(expected.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(detail::nfc(texts[i]), expected[i]) << "text " << i;
  }
}

TEST(HfTokenizer, AbsorbsSpacesWhenAnAddedTokenStrips) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  nlohmann::json j = test::qwen2_tokenizer();
  j["added_tokens"][1]["lstrip"] = true;  // <|im_start|>
  j["added_tokens"][1]["rstrip"] = true;
  Loaded l(j);
  const HfTokenizer& t = *l.tok;
  const int32_t im_start = id_of(t, "<|im_start|>");
  // The spaces on both sides belong to the token, so "b" has no leading space.
  EXPECT_EQ(t.encode_plain("a  <|im_start|>\t b"), (Ids{id_of(t, "a"), im_start, id_of(t, "b")}));
  EXPECT_EQ(t.encode_plain("<|im_start|><|im_start|>"), (Ids{im_start, im_start}));
  if (have_python_reference()) {
    const std::vector<std::string> texts = {"a  <|im_start|>\t b", " <|im_start|> x <|im_start|>",
                                            "\n<|im_start|>\n"};
    const std::vector<Ids> expected = reference_ids(l.dir.file("tokenizer.json"), texts, l.dir);
    ASSERT_EQ(expected.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(t.encode(texts[i]), expected[i]) << i;
  }
}

TEST(HfTokenizer, ThrowsNamingTheIdWhenDecodeGetsNoToken) {
  Loaded l(test::tinyllama_tokenizer());
  const std::string msg = data_error_of([&] { l.tok->decode({1, 5, 100000}); });
  expect_contains(msg, "id 100000 at position 2");
}

TEST(HfTokenizer, SplitsEveryDigitWhenSmolLm2Digits) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  Loaded l(test::smollm2_tokenizer());
  const HfTokenizer& t = *l.tok;
  EXPECT_EQ(t.encode("123"), (Ids{id_of(t, "1"), id_of(t, "2"), id_of(t, "3")}));
  EXPECT_EQ(t.encode(" the"), Ids{id_of(t, test::byte_level(" the"))});
}

TEST(HfTokenizer, FallsBackToBytesWhenTinyLlamaLacksACharacter) {
  Loaded l(test::tinyllama_tokenizer());
  const HfTokenizer& t = *l.tok;
  const std::string sp = "\xE2\x96\x81";
  // Prepend + Replace: "▁日"; 日 (E6 97 A5) is not in the vocabulary: its byte tokens, ids 3 + b.
  EXPECT_EQ(t.encode_plain("\xE6\x97\xA5"), (Ids{id_of(t, sp), 3 + 0xE6, 3 + 0x97, 3 + 0xA5}));
  EXPECT_EQ(t.encode("Hello"), (Ids{1, id_of(t, sp + "Hello")}));
  EXPECT_EQ(t.decode(t.encode("Hello world \xE6\x97\xA5\xE6\x9C\xAC!")),
            "Hello world \xE6\x97\xA5\xE6\x9C\xAC!");
  EXPECT_EQ(t.vocab_size(), static_cast<int64_t>(test::metaspace_model()["vocab"].size()));
}

TEST(HfTokenizer, PrependsOnlyAtTheStartWhenMistralSchemeIsFirst) {
  Loaded l(test::mistral_tokenizer());
  const HfTokenizer& t = *l.tok;
  const std::string sp = "\xE2\x96\x81";
  EXPECT_EQ(t.encode_plain("Hello"), Ids{id_of(t, sp + "Hello")});
  // After an added token the text does not start the input: no ▁ is prepended.
  EXPECT_EQ(t.encode_plain("<s>the"), (Ids{1, id_of(t, "t"), id_of(t, "h"), id_of(t, "e")}));
  EXPECT_EQ(t.decode(t.encode("Hello world")), "Hello world");
}

TEST(HfTokenizer, IsBuiltByMakeTokenizerWhenConfigSaysHf) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  test::ScratchDir dir("hf_tok");
  test::write_file(dir.file("tokenizer.json"), test::qwen2_tokenizer().dump());
  config::DataConfig cfg;
  cfg.tokenizer = config::TokenizerKind::kHf;
  cfg.vocab_path = dir.file("tokenizer.json");
  const auto tok = make_tokenizer(cfg, "");
  EXPECT_EQ(tok->name(), "hf");
  EXPECT_EQ(tok->decode(tok->encode("Hello world")), "Hello world");
  cfg.vocab_path.clear();
  expect_contains(data_error_of([&] { make_tokenizer(cfg, ""); }), "data.vocab_path");
}

TEST(HfTokenizer, KeepsFingerprintWhenFileIsReformattedOrSaved) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  test::ScratchDir dir("hf_tok");
  test::write_file(dir.file("a.json"), test::qwen2_tokenizer().dump());
  test::write_file(dir.file("b.json"), test::qwen2_tokenizer().dump(4));
  const auto a = load_hf_tokenizer(dir.file("a.json"));
  const auto b = load_hf_tokenizer(dir.file("b.json"));
  EXPECT_EQ(a->fingerprint().size(), 64u);
  EXPECT_EQ(a->fingerprint(), b->fingerprint());
  EXPECT_EQ(a->save_files(dir.path()), std::vector<std::string>{"tokenizer.json"});
  EXPECT_EQ(load_hf_tokenizer(dir.file("tokenizer.json"))->fingerprint(), a->fingerprint());
  EXPECT_NE(load_hf_tokenizer(dir.file("tokenizer.json"))->fingerprint(),
            Loaded(test::smollm2_tokenizer()).tok->fingerprint());
}

// The message of loading j; fails the test when it loads.
std::string error_of(const nlohmann::json& j) {
  return data_error_of([&] { parse_hf_tokenizer(j.dump(), "tok.json"); });
}

TEST(HfTokenizer, NamesTheModelWhenItIsUnigram) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  nlohmann::json j = test::qwen2_tokenizer();
  j["model"]["type"] = "Unigram";
  const std::string msg = error_of(j);
  expect_contains(msg, "tok.json: model.type");
  expect_contains(msg, "Unigram");
}

TEST(HfTokenizer, NamesTheJsonPathWhenAPreTokenizerIsUnknown) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  nlohmann::json j = test::qwen2_tokenizer();
  j["pre_tokenizer"]["pretokenizers"][1] = {{"type", "BertPreTokenizer"}};
  const std::string msg = error_of(j);
  expect_contains(msg, "pre_tokenizer.pretokenizers[1].type");
  expect_contains(msg, "BertPreTokenizer");
  j = test::qwen2_tokenizer();
  j["normalizer"] = {{"type", "NFKC"}};
  expect_contains(error_of(j), "normalizer.type: normalizer 'NFKC'");
  j = test::qwen2_tokenizer();
  j["decoder"] = {{"type", "WordPiece"}};
  expect_contains(error_of(j), "decoder.type");
  j = test::llama3_tokenizer();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(?<";
  expect_contains(error_of(j), "pre_tokenizer.pretokenizers[0].pattern.Regex: PCRE2 rejects");
}

TEST(HfTokenizer, NamesTheMergeWhenItsTokenIsNotInTheVocab) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  nlohmann::json j = test::qwen2_tokenizer();
  j["model"]["merges"][3] = "zzz\xC4\xA0 q";
  const std::string msg = error_of(j);
  expect_contains(msg, "model.merges[3]");
  expect_contains(msg, "not in model.vocab");
  j = test::llama3_tokenizer();
  j["model"]["merges"][0] = {"a", "b", "c"};
  expect_contains(error_of(j), "model.merges[0]: expected");
}

TEST(HfTokenizer, SaysTruncatedWhenTheFileIsCutShort) {
  const std::string text = test::qwen2_tokenizer().dump();
  const std::string msg =
      data_error_of([&] { parse_hf_tokenizer(text.substr(0, text.size() / 2), "cut.json"); });
  expect_contains(msg, "cut.json: not valid JSON (truncated?)");
  expect_contains(data_error_of([] { load_hf_tokenizer("/nonexistent/tokenizer.json"); }),
                  "/nonexistent/tokenizer.json");
}

TEST(HfTokenizer, RejectsSingleWordAddedTokensByName) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  nlohmann::json j = test::qwen2_tokenizer();
  j["added_tokens"][1]["single_word"] = true;
  expect_contains(error_of(j), "added_tokens[1].single_word");
}

TEST(HfTokenizer, EncodesTinyShakespeareInSecondsWhenLlama3Style) {
  LLMPROF_SKIP_WITHOUT_PCRE2();
  LLMPROF_SKIP_WITHOUT_SHARED_DATA();
  const std::string text = read_text_file(test::shared_data("tinyshakespeare.txt"));
  Loaded l(test::llama3_tokenizer());
  const auto t0 = std::chrono::steady_clock::now();
  const Ids ids = l.tok->encode(text);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("tiny shakespeare: %zu bytes -> %zu ids in %.3f s\n", text.size(), ids.size(), s);
  EXPECT_LT(s, 10.0);  // measured well under a second; generous for a loaded machine
  EXPECT_EQ(l.tok->decode(ids), text);
}

}  // namespace
}  // namespace llmprof::data
