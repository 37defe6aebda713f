#include "data/unicode.h"

#include <algorithm>
#include <iterator>

#include "data/unicode_table.h"

namespace llmprof::data::detail {

namespace {

constexpr uint32_t kReplacement = 0xFFFD;

// The class of an ASCII code point, exactly.
CharClass classify_ascii(uint32_t cp) {
  if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return CharClass::kLetter;
  if (cp >= '0' && cp <= '9') return CharClass::kNumber;
  if (cp == ' ' || (cp >= '\t' && cp <= '\r')) return CharClass::kSpace;
  return CharClass::kOther;
}

// The end of the run of class cls starting at pos.
size_t run_end(std::string_view text, size_t pos, CharClass cls) {
  while (pos < text.size()) {
    size_t len = 0;
    if (classify(decode_utf8(text, pos, &len)) != cls) break;
    pos += len;
  }
  return pos;
}

// The end of GPT-2's match starting at pos (pos < size): the first alternative that matches.
size_t match_end(std::string_view text, size_t pos) {
  const std::string_view rest = text.substr(pos);
  if (rest[0] == '\'') {  // 's|'t|'re|'ve|'m|'ll|'d
    for (std::string_view c : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}) {
      if (rest.substr(0, c.size()) == c) return pos + c.size();
    }
  }
  size_t len = 0;
  const CharClass cls = classify(decode_utf8(text, pos, &len));
  if (cls != CharClass::kSpace) return run_end(text, pos, cls);  // \p{L}+ | \p{N}+ | [^...]+
  if (rest[0] == ' ' && pos + 1 < text.size()) {  // a space glued to the run after it
    size_t next_len = 0;
    const CharClass next = classify(decode_utf8(text, pos + 1, &next_len));
    if (next != CharClass::kSpace) return run_end(text, pos + 1, next);
  }
  // \s+(?!\S): the whole white-space run if it ends the text, else all but its last character
  // (which then leads the next piece); a single white-space character before \S is \s+.
  size_t end = pos;
  size_t last_start = pos;
  while (end < text.size()) {
    size_t n = 0;
    if (classify(decode_utf8(text, end, &n)) != CharClass::kSpace) break;
    last_start = end;
    end += n;
  }
  if (end == text.size() || last_start == pos) return end;
  return last_start;
}

}  // namespace

uint32_t decode_utf8(std::string_view text, size_t pos, size_t* len) {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  *len = 1;
  if (b0 < 0x80) return b0;
  size_t n = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return kReplacement;  // a continuation byte or 0xF8..0xFF where a sequence should start
  }
  if (pos + n > text.size()) return kReplacement;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[pos + k]);
    if ((b & 0xC0) != 0x80) return kReplacement;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return kReplacement;
  *len = n;
  return cp;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

CharClass classify(uint32_t cp) {
  if (cp < 0x80) return classify_ascii(cp);
  using unicode_table::kRanges;
  const auto it =
      std::upper_bound(std::begin(kRanges), std::end(kRanges), cp,
                       [](uint32_t c, const unicode_table::Range& r) { return c < r.lo; });
  if (it == std::begin(kRanges)) return CharClass::kOther;
  const unicode_table::Range& r = *std::prev(it);
  return cp <= r.hi ? r.cls : CharClass::kOther;
}

std::vector<std::string_view> gpt2_pretokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = match_end(text, pos);
    pieces.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return pieces;
}

}  // namespace llmprof::data::detail
