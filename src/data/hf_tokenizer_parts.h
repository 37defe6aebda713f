// The pieces of a tokenizer.json pipeline, private to the data concern: the PCRE2 regex wrapper,
// NFC, and the normalizers, pre-tokenizers and decoders as small classes parsed from their JSON.
// The model (BPE), added tokens and post-processor live in hf_tokenizer.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmprof::data::detail {

// Where a JSON value sits, for messages: the file ("model/tokenizer.json") and the JSON path
// ("pre_tokenizer.pretokenizers[1]").
struct JsonWhere {
  std::string origin;
  std::string path;
  JsonWhere key(const std::string& k) const { return {origin, path.empty() ? k : path + "." + k}; }
  JsonWhere index(size_t i) const { return {origin, path + "[" + std::to_string(i) + "]"}; }
};

// Token ids above this are refused (the largest vocabularies in use hold ~256k tokens), so a
// corrupt id cannot make the id -> token table take gigabytes.
constexpr int64_t kMaxTokenId = (1 << 24) - 1;
// Sequences nested deeper than this (a JSON path this long) are refused, bounding the recursion.
constexpr size_t kMaxJsonPathBytes = 512;

// Throws DataError "<origin>: <path>: <message>".
[[noreturn]] void hf_fail(const JsonWhere& where, const std::string& message);
// j[key], or hf_fail naming the missing key.
const nlohmann::json& hf_need(const nlohmann::json& j,
                              const std::string& key,
                              const JsonWhere& where);
// j[key] as a string / bool; absent or null gives fallback; another type fails.
std::string hf_string(const nlohmann::json& j,
                      const std::string& key,
                      const JsonWhere& where,
                      const std::string& fallback = "");
bool hf_bool(const nlohmann::json& j,
             const std::string& key,
             const JsonWhere& where,
             bool fallback);
// The "type" of a piece; fails unless it is a string, or when it sits too deep.
std::string hf_type(const nlohmann::json& j, const JsonWhere& where);

// Whether regexes can be compiled: llmprof was built with PCRE2 (LLMPROF_HAVE_PCRE2).
bool regex_engine_available();

// A compiled PCRE2 pattern (UTF, UCP: \p{L}, \s and \w are Unicode's; invalid UTF-8 in the
// subject is matched as bytes that no character class contains), or a literal string.
class Regex {
 public:
  // Throws DataError naming where and PCRE2's message for a pattern it rejects, or saying that
  // llmprof was built without PCRE2 (a literal needs no engine).
  Regex(const std::string& pattern, bool literal, const JsonWhere& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // Non-empty, non-overlapping matches left to right as [begin, end) byte offsets.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;
  // text with every match replaced by content.
  std::string replace_all(std::string_view text, const std::string& content) const;

 private:
  std::optional<std::string> literal_;  // set: a literal, found without an engine
  void* code_ = nullptr;                // pcre2_code_8
  bool jit_ = false;
};

// Either form of a "pattern": {"String": s} (literal) or {"Regex": r}.
std::unique_ptr<Regex> parse_pattern(const nlohmann::json& j, const JsonWhere& where);

// Unicode Normalization Form C (UAX #15) of the valid UTF-8 runs of text; invalid bytes stay.
std::string nfc(std::string_view text);
// The Unicode version of nfc()'s tables.
const char* nfc_unicode_version();

// GPT-2's bytes_to_unicode: each byte's printable stand-in character, UTF-8.
const std::string& byte_level_char(unsigned char b);
// The byte a stand-in code point stands for, or -1.
int byte_level_byte(uint32_t cp);

// A stretch of text between pipeline stages: an added token already (added_id >= 0) or text
// still to split; at_start: it begins at offset 0 of the input (Metaspace's prepend "first").
struct Split {
  std::string text;
  int32_t added_id = -1;
  bool at_start = false;
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits every text Split of splits further (added tokens pass through).
  virtual void pre_tokenize(std::vector<Split>& splits) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Rewrites the token strings; the decoded text is their concatenation afterwards.
  virtual void decode(std::vector<std::string>& tokens) const = 0;
};

// Each returns nullptr for a JSON null and fails naming the type for one llmprof lacks.
std::unique_ptr<Normalizer> parse_normalizer(const nlohmann::json& j, const JsonWhere& where);
std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const nlohmann::json& j, const JsonWhere& where);
std::unique_ptr<Decoder> parse_decoder(const nlohmann::json& j, const JsonWhere& where);

}  // namespace llmprof::data::detail
