#include "unicode.h"

#include <algorithm>
#include <array>
#include <iterator>

#include "bert_unicode_table.h"
#include "unicode_table.h"

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

// ---------------------------------------------------------------------------------------------
// BERT's basic tokenizer.

constexpr uint32_t kCapitalSigma = 0x3A3;
constexpr uint32_t kSmallSigma = 0x3C3;
constexpr uint32_t kFinalSigma = 0x3C2;
constexpr uint32_t kHangulFirst = 0xAC00;  // Hangul syllables: NFD is arithmetic (Unicode 3.12)
constexpr uint32_t kHangulLast = 0xD7A3;

// The flags of a code point from the table: the row holding it, or none.
uint8_t bert_flags_from_table(uint32_t cp) {
  using bert_table::kBertRanges;
  const auto it = std::upper_bound(std::begin(kBertRanges), std::end(kBertRanges), cp,
                                   [](uint32_t c, const bert_table::Range& r) { return c < r.lo; });
  if (it == std::begin(kBertRanges)) return 0;
  const bert_table::Range& r = *std::prev(it);
  return cp <= r.hi ? r.flags : 0;
}

// Flags of the 128 ASCII code points, looked up once: most text is mostly ASCII.
const std::array<uint8_t, 128>& ascii_bert_flags() {
  static const std::array<uint8_t, 128> flags = [] {
    std::array<uint8_t, 128> f{};
    for (uint32_t c = 0; c < 128; ++c) f[c] = bert_flags_from_table(c);
    return f;
  }();
  return flags;
}

// Python's lower() of U+03A3 at word[i]: final sigma when a cased letter precedes it and none
// follows it, case-ignorable characters skipped both ways (CPython's handle_capital_sigma).
uint32_t lower_capital_sigma(const std::vector<uint32_t>& word, size_t i) {
  size_t j = i;
  while (j > 0 && (bert_flags(word[j - 1]) & kBertCaseIgnorable)) --j;
  if (j == 0 || !(bert_flags(word[j - 1]) & kBertCased)) return kSmallSigma;
  j = i + 1;
  while (j < word.size() && (bert_flags(word[j]) & kBertCaseIgnorable)) ++j;
  const bool final = j == word.size() || !(bert_flags(word[j]) & kBertCased);
  return final ? kFinalSigma : kSmallSigma;
}

// One white-space word of cleaned text: lower-case, strip accents, split on punctuation
// (_run_split_on_punc), appending the pieces to buf/ends.
void fold_and_split(const std::vector<uint32_t>& word,
                    bool lower_case,
                    std::string* buf,
                    std::vector<size_t>* ends) {
  bool open = false;  // a piece is being appended to buf
  for (size_t i = 0; i < word.size(); ++i) {
    uint32_t out[3] = {word[i], 0, 0};
    int n = 1;
    if (!lower_case) {
      // cased vocabularies (do_lower_case=False) keep case and accents
    } else if (word[i] == kCapitalSigma) {
      out[0] = lower_capital_sigma(word, i);
    } else {
      n = bert_fold(word[i], out);
    }
    for (int k = 0; k < n; ++k) {
      if (bert_flags(out[k]) & kBertPunct) {
        if (open) ends->push_back(buf->size());
        append_utf8(*buf, out[k]);
        ends->push_back(buf->size());
        open = false;
      } else {
        append_utf8(*buf, out[k]);
        open = true;
      }
    }
  }
  if (open) ends->push_back(buf->size());
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

size_t find_invalid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    size_t len = 0;
    if (decode_utf8(text, pos, &len) == kReplacement && len == 1) return pos;  // not U+FFFD itself
    pos += len;
  }
  return std::string_view::npos;
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

uint8_t bert_flags(uint32_t cp) {
  return cp < 128 ? ascii_bert_flags()[cp] : bert_flags_from_table(cp);
}

int bert_fold(uint32_t cp, uint32_t out[3]) {
  if (cp < 128) {
    out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    return 1;
  }
  if (bert_flags_from_table(cp) & kBertMark) return 0;
  if (cp >= kHangulFirst && cp <= kHangulLast) {  // LV or LVT: leading, vowel, trailing jamo
    const uint32_t s = cp - kHangulFirst;
    out[0] = 0x1100 + s / 588;
    out[1] = 0x1161 + (s % 588) / 28;
    out[2] = 0x11A7 + s % 28;
    return s % 28 == 0 ? 2 : 3;
  }
  using bert_table::kBertFolds;
  const auto it = std::lower_bound(std::begin(kBertFolds), std::end(kBertFolds), cp,
                                   [](const bert_table::Fold& f, uint32_t c) { return f.cp < c; });
  if (it == std::end(kBertFolds) || it->cp != cp) {
    out[0] = cp;
    return 1;
  }
  int n = 0;
  while (n < 3 && it->out[n] != 0) {
    out[n] = it->out[n];
    ++n;
  }
  return n;
}

void bert_pretokenize(std::string_view text, std::string* buf, std::vector<size_t>* ends,
                      bool lower_case) {
  std::vector<uint32_t> word;  // code points of the current white-space word, controls dropped
  word.reserve(64);
  auto flush = [&] {
    if (!word.empty()) fold_and_split(word, lower_case, buf, ends);
    word.clear();
  };
  for (size_t pos = 0; pos < text.size();) {
    size_t len = 1;
    const auto b0 = static_cast<unsigned char>(text[pos]);
    const uint32_t cp = b0 < 0x80 ? b0 : decode_utf8(text, pos, &len);
    pos += len;
    const uint8_t flags = bert_flags(cp);
    if (flags & kBertDrop) continue;  // _clean_text; invalid UTF-8 decoded as U+FFFD goes too
    if (flags & kBertSpace) {
      flush();
    } else if (flags & kBertCjk) {  // _tokenize_chinese_chars: " " + c + " "
      flush();
      word.push_back(cp);
      flush();
    } else {
      word.push_back(cp);
    }
  }
  flush();
}

}  // namespace llmprof::data::detail
