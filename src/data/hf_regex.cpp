// tokenizer.json's shared helpers: JSON access with the path in messages, the PCRE2 wrapper the
// Split pre-tokenizer and Replace pieces use, and GPT-2's byte-level alphabet.
#include <array>
#include <nlohmann/json.hpp>
#include <optional>

#include "hf_tokenizer_parts.h"
#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "unicode.h"

#ifdef LLMPROF_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

namespace llmprof::data::detail {

void hf_fail(const JsonWhere& where, const std::string& message) {
  throw DataError(where.origin + ": " + (where.path.empty() ? "" : where.path + ": ") + message);
}

const nlohmann::json& hf_need(const nlohmann::json& j,
                              const std::string& key,
                              const JsonWhere& where) {
  if (!j.is_object()) hf_fail(where, "expected a JSON object");
  const auto it = j.find(key);
  if (it == j.end()) hf_fail(where, "missing key '" + key + "'");
  return *it;
}

std::string hf_string(const nlohmann::json& j,
                      const std::string& key,
                      const JsonWhere& where,
                      const std::string& fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) hf_fail(where.key(key), "expected a string");
  return it->get<std::string>();
}

bool hf_bool(const nlohmann::json& j,
             const std::string& key,
             const JsonWhere& where,
             bool fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) hf_fail(where.key(key), "expected true or false");
  return it->get<bool>();
}

std::string hf_type(const nlohmann::json& j, const JsonWhere& where) {
  if (where.path.size() > kMaxJsonPathBytes) hf_fail(where, "nested too deeply");
  const nlohmann::json& t = hf_need(j, "type", where);
  if (!t.is_string()) hf_fail(where.key("type"), "expected a string");
  return t.get<std::string>();
}

// ---------------------------------------------------------------------------------------------
// Patterns: a literal is found with std::string_view::find; a regex is PCRE2's.

namespace {

#ifdef LLMPROF_HAVE_PCRE2
pcre2_code* code_of(void* p) { return static_cast<pcre2_code*>(p); }

// PCRE2's text for an error code.
std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> msg{};
  pcre2_get_error_message(code, msg.data(), msg.size());
  return reinterpret_cast<const char*>(msg.data());
}
#endif

}  // namespace

bool regex_engine_available() {
#ifdef LLMPROF_HAVE_PCRE2
  return true;
#else
  return false;
#endif
}

Regex::Regex(const std::string& pattern, bool literal, const JsonWhere& where)
    : literal_(literal ? std::optional<std::string>(pattern) : std::nullopt) {
  if (literal) return;
#ifdef LLMPROF_HAVE_PCRE2
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                        PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  if (code_ == nullptr) {
    hf_fail(where, "PCRE2 rejects the pattern '" + printable(pattern, 120) + "' at offset " +
                       std::to_string(offset) + ": " + pcre2_message(error));
  }
  // JIT where the platform has it; the interpreter otherwise (same matches, slower).
  jit_ = pcre2_jit_compile(code_of(code_), PCRE2_JIT_COMPLETE) == 0;
#else
  hf_fail(where, "the regex '" + printable(pattern, 80) +
                     "' needs PCRE2, and this llmprof was built without it (install libpcre2-dev "
                     "and rebuild)");
#endif
}

Regex::~Regex() {
#ifdef LLMPROF_HAVE_PCRE2
  if (code_ != nullptr) pcre2_code_free(code_of(code_));
#endif
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  if (literal_) {
    if (literal_->empty()) return out;
    for (size_t pos = text.find(*literal_); pos != std::string_view::npos;
         pos = text.find(*literal_, pos + literal_->size())) {
      out.emplace_back(pos, pos + literal_->size());
    }
    return out;
  }
#ifdef LLMPROF_HAVE_PCRE2
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_of(code_), nullptr);
  if (md == nullptr) throw std::bad_alloc();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start <= text.size()) {
    int rc = pcre2_match(code_of(code_), subject, text.size(), start, 0, md, nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT && jit_) {  // a very long run: the interpreter's heap
      rc = pcre2_match(code_of(code_), subject, text.size(), start, PCRE2_NO_JIT, md, nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      pcre2_match_data_free(md);
      throw DataError("tokenizer regex: PCRE2 match failed: " + pcre2_message(rc));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t b = ov[0];
    const size_t e = ov[1];
    if (e > b) {
      out.emplace_back(b, e);
      start = e;
    } else {  // an empty match: step over one character (one byte where invalid)
      if (b >= text.size()) break;
      size_t len = 1;
      decode_utf8(text, b, &len);
      start = b + len;
    }
  }
  pcre2_match_data_free(md);
#endif
  return out;
}

std::string Regex::replace_all(std::string_view text, const std::string& content) const {
  std::string out;
  size_t prev = 0;
  for (const auto& [b, e] : find_all(text)) {
    out.append(text.substr(prev, b - prev));
    out += content;
    prev = e;
  }
  out.append(text.substr(prev));
  return out;
}

std::unique_ptr<Regex> parse_pattern(const nlohmann::json& j, const JsonWhere& where) {
  if (!j.is_object() || j.size() != 1) {
    hf_fail(where, "expected {\"String\": ...} or {\"Regex\": ...}");
  }
  const auto it = j.begin();
  const std::string kind = it.key();
  const nlohmann::json& value = it.value();
  if ((kind != "String" && kind != "Regex") || !value.is_string()) {
    hf_fail(where, "expected {\"String\": text} or {\"Regex\": text}, got key '" +
                       printable(kind, 40) + "'");
  }
  return std::make_unique<Regex>(value.get<std::string>(), kind == "String", where.key(kind));
}

// ---------------------------------------------------------------------------------------------
// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 map to
// U+0100, U+0101, ... in byte order.

namespace {
struct ByteLevelAlphabet {
  std::array<std::string, 256> chars;
  std::array<int, 512> byte_of{};  // every stand-in is below U+0144
  ByteLevelAlphabet() {
    byte_of.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const uint32_t cp = printable ? b : next++;
      append_utf8(chars[b], cp);
      byte_of[cp] = static_cast<int>(b);
    }
  }
};
const ByteLevelAlphabet& alphabet() {
  static const ByteLevelAlphabet a;
  return a;
}
}  // namespace

const std::string& byte_level_char(unsigned char b) { return alphabet().chars[b]; }

int byte_level_byte(uint32_t cp) { return cp < 512 ? alphabet().byte_of[cp] : -1; }

}  // namespace llmprof::data::detail
