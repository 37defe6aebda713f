// UTF-8 decoding, Unicode character classes and GPT-2's pre-tokenizer, private to the data
// concern. std::regex has no \p{L}, so GPT-2's pattern is matched by hand here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::data::detail {

// The classes GPT-2's pattern distinguishes: \p{L}, \p{N}, \s and everything else.
enum class CharClass { kLetter, kNumber, kSpace, kOther };

// Decodes the code point starting at text[pos] (pos < size) and sets *len to its byte length.
// Invalid, overlong or truncated sequences decode as U+FFFD of length 1, so every byte of the
// input stays covered and byte-level BPE still round-trips it.
uint32_t decode_utf8(std::string_view text, size_t pos, size_t* len);

// Appends the UTF-8 encoding of cp (cp <= 0x10FFFF).
void append_utf8(std::string& out, uint32_t cp);

// The class of a code point: ASCII by hand, the rest from a table generated with Python's
// `regex` module (unicode_table.h), so it agrees with encoder.py for every assigned code point.
CharClass classify(uint32_t cp);

// Splits text as GPT-2's encoder.py pattern does:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// The pieces are views into text and concatenate back to it exactly.
std::vector<std::string_view> gpt2_pretokenize(std::string_view text);

}  // namespace llmprof::data::detail
