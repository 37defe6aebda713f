// Small tokenizer.json documents in the shapes of real models' (Llama 3, Qwen2, SmolLM2,
// TinyLlama/Llama 2, Mistral), built in code: a byte-level or Metaspace alphabet plus merges that
// spell a few words left to right. Shared by the hf tokenizer tests and the fuzz seeds.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "hf_tokenizer_parts.h"

namespace llmprof::test {

// text's bytes as GPT-2's stand-in characters (" the" -> "Ġthe").
inline std::string byte_level(const std::string& text) {
  std::string s;
  for (char c : text) s += data::detail::byte_level_char(static_cast<unsigned char>(c));
  return s;
}

// The characters of UTF-8 text.
inline std::vector<std::string> chars_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    while (i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80)
      ++len;
    out.push_back(text.substr(i, len));
    i += len;
  }
  return out;
}

// A BPE "model": vocab = specials, then the alphabet, then every prefix of each word (merges
// (w[:k], w[k]) in order, repeats skipped), then whole tokens no merge reaches. pair_form writes
// merges as ["a", "b"], else "a b".
inline nlohmann::json bpe_model(const std::vector<std::string>& specials,
                                const std::vector<std::string>& alphabet,
                                const std::vector<std::string>& words,
                                const std::vector<std::string>& whole,
                                bool pair_form) {
  nlohmann::json vocab = nlohmann::json::object();
  int id = 0;
  auto add = [&](const std::string& t) {
    if (!vocab.contains(t)) vocab[t] = id++;
  };
  for (const auto& t : specials) add(t);
  for (const auto& t : alphabet) add(t);
  nlohmann::json merges = nlohmann::json::array();
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& w : words) {
    const std::vector<std::string> cs = chars_of(w);
    std::string left = cs[0];
    for (size_t k = 1; k < cs.size(); ++k) {
      if (seen.insert({left, cs[k]}).second) {
        if (pair_form) {
          merges.push_back({left, cs[k]});
        } else {
          merges.push_back(left + " " + cs[k]);
        }
      }
      left += cs[k];
      add(left);
    }
  }
  for (const auto& t : whole) add(t);
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"vocab", vocab},
          {"merges", merges}};
}

inline std::vector<std::string> byte_alphabet() {
  std::vector<std::string> a;
  for (int b = 0; b < 256; ++b)
    a.push_back(data::detail::byte_level_char(static_cast<unsigned char>(b)));
  return a;
}

// Words whose merges the byte-level fixtures share (written as text, mapped to stand-ins).
inline std::vector<std::string> byte_level_words() {
  std::vector<std::string> out;
  for (const char* w : {" the",
                        " and",
                        "ing",
                        " world",
                        "Hello",
                        " you",
                        "'re",
                        "'t",
                        " don",
                        "123",
                        "12",
                        " 1",
                        "\n\n",
                        "  ",
                        "   ",
                        " caf\xC3\xA9",
                        "\xE6\x97\xA5",
                        "\xE6\x97\xA5\xE6\x9C\xAC",
                        " na",
                        "re",
                        "ll",
                        "'ll",
                        "I",
                        " \xF0\x9F\xA4\x96"}) {
    out.push_back(byte_level(w));
  }
  return out;
}

inline nlohmann::json added(int id, const std::string& content, bool special) {
  return {{"id", id},        {"content", content},     {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", !special}, {"special", special}};
}

inline nlohmann::json split(const std::string& regex) {
  return {{"type", "Split"},
          {"pattern", {{"Regex", regex}}},
          {"behavior", "Isolated"},
          {"invert", false}};
}

inline nlohmann::json byte_level_pre(bool use_regex) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", false},
          {"trim_offsets", true},
          {"use_regex", use_regex}};
}

inline const char* kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline const char* kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Llama 3: Split with its regex + ByteLevel, ignore_merges, BOS from TemplateProcessing.
inline nlohmann::json llama3_tokenizer() {
  nlohmann::json model = bpe_model({}, byte_alphabet(), byte_level_words(),
                                   {byte_level(" hello"), byte_level("12345")}, true);
  model["ignore_merges"] = true;
  const int n = static_cast<int>(model["vocab"].size());
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens",
           {added(n, "<|begin_of_text|>", true), added(n + 1, "<|end_of_text|>", true)}},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "Sequence"}, {"pretokenizers", {split(kLlama3Regex), byte_level_pre(false)}}}},
          {"post_processor",
           {{"type", "Sequence"},
            {"processors",
             {{{"type", "ByteLevel"},
               {"add_prefix_space", true},
               {"trim_offsets", false},
               {"use_regex", true}},
              {{"type", "TemplateProcessing"},
               {"single",
                {{{"SpecialToken", {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}},
                 {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
               {"pair", nlohmann::json::array()},
               {"special_tokens",
                {{"<|begin_of_text|>",
                  {{"id", "<|begin_of_text|>"},
                   {"ids", {n}},
                   {"tokens", {"<|begin_of_text|>"}}}}}}}}}}},
          {"decoder",
           {{"type", "ByteLevel"},
            {"add_prefix_space", true},
            {"trim_offsets", true},
            {"use_regex", true}}},
          {"model", model}};
}

// Qwen2: NFC, Split with its regex + ByteLevel, merges as strings, no BOS.
inline nlohmann::json qwen2_tokenizer() {
  nlohmann::json model = bpe_model({}, byte_alphabet(), byte_level_words(), {}, false);
  const int n = static_cast<int>(model["vocab"].size());
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens",
           {added(n, "<|endoftext|>", true), added(n + 1, "<|im_start|>", true),
            added(n + 2, "<|im_end|>", true)}},
          {"normalizer", {{"type", "NFC"}}},
          {"pre_tokenizer",
           {{"type", "Sequence"}, {"pretokenizers", {split(kQwen2Regex), byte_level_pre(false)}}}},
          {"post_processor",
           {{"type", "ByteLevel"},
            {"add_prefix_space", false},
            {"trim_offsets", false},
            {"use_regex", false}}},
          {"decoder",
           {{"type", "ByteLevel"},
            {"add_prefix_space", false},
            {"trim_offsets", false},
            {"use_regex", false}}},
          {"model", model}};
}

// SmolLM2: Digits (individual) + ByteLevel with GPT-2's regex.
inline nlohmann::json smollm2_tokenizer() {
  nlohmann::json model = bpe_model({}, byte_alphabet(), byte_level_words(), {}, false);
  const int n = static_cast<int>(model["vocab"].size());
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", {added(n, "<|endoftext|>", true), added(n + 1, "<|im_start|>", true)}},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Digits"}, {"individual_digits", true}}, byte_level_pre(true)}}}},
          {"post_processor", nullptr},
          {"decoder",
           {{"type", "ByteLevel"},
            {"add_prefix_space", true},
            {"trim_offsets", true},
            {"use_regex", true}}},
          {"model", model}};
}

// A SentencePiece-style BPE vocabulary: <unk> <s> </s>, the 256 <0xNN> byte tokens, letters.
inline nlohmann::json metaspace_model() {
  std::vector<std::string> alphabet;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    alphabet.push_back(name);
  }
  alphabet.push_back("\xE2\x96\x81");
  for (const char* s :
       {"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", "',.!?:-"}) {
    for (const char* c = s; *c; ++c) alphabet.push_back(std::string(1, *c));
  }
  alphabet.push_back("\xC3\xA9");  // é
  const std::string sp = "\xE2\x96\x81";
  nlohmann::json model = bpe_model({"<unk>", "<s>", "</s>"}, alphabet,
                                   {sp + "the", sp + "Hello", sp + "world", "ing", sp + "don", "'t",
                                    sp + "caf\xC3\xA9", sp + sp, "12"},
                                   {}, false);
  model["unk_token"] = "<unk>";
  model["fuse_unk"] = true;
  model["byte_fallback"] = true;
  return model;
}

inline nlohmann::json bos_template(const std::string& bos, int id) {
  return {{"type", "TemplateProcessing"},
          {"single",
           {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
          {"pair", nlohmann::json::array()},
          {"special_tokens", {{bos, {{"id", bos}, {"ids", {id}}, {"tokens", {bos}}}}}}};
}

inline nlohmann::json sentencepiece_added() {
  return {added(0, "<unk>", true), added(1, "<s>", true), added(2, "</s>", true)};
}

// Llama 2 / TinyLlama: normalizer Prepend("▁") + Replace(" ", "▁"), no pre-tokenizer,
// byte_fallback, the SentencePiece decoder chain.
inline nlohmann::json tinyllama_tokenizer() {
  const std::string sp = "\xE2\x96\x81";
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", sentencepiece_added()},
          {"normalizer",
           {{"type", "Sequence"},
            {"normalizers",
             {{{"type", "Prepend"}, {"prepend", sp}},
              {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", sp}}}}}},
          {"pre_tokenizer", nullptr},
          {"post_processor", bos_template("<s>", 1)},
          {"decoder",
           {{"type", "Sequence"},
            {"decoders",
             {{{"type", "Replace"}, {"pattern", {{"String", sp}}}, {"content", " "}},
              {{"type", "ByteFallback"}},
              {{"type", "Fuse"}},
              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
          {"model", metaspace_model()}};
}

// Mistral (newer files): Metaspace pre-tokenizer, prepend_scheme first, split false.
inline nlohmann::json mistral_tokenizer() {
  const std::string sp = "\xE2\x96\x81";
  return {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", sentencepiece_added()},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Metaspace"}, {"replacement", sp}, {"prepend_scheme", "first"}, {"split", false}}},
      {"post_processor", bos_template("<s>", 1)},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Metaspace"},
           {"replacement", sp},
           {"prepend_scheme", "first"},
           {"split", false}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}}}}}},
      {"model", metaspace_model()}};
}

}  // namespace llmprof::test
