// UTF-8 decoding, Unicode character classes and the pre-tokenizers of GPT-2 and BERT, private to
// the data concern. std::regex has no \p{L}, so GPT-2's pattern is matched by hand here; BERT's
// basic tokenizer needs Unicode categories, case folding and NFD, taken from generated tables.
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

// The byte offset of the first invalid, overlong, surrogate or truncated UTF-8 sequence in text,
// or std::string_view::npos when text is valid UTF-8.
size_t find_invalid_utf8(std::string_view text);

// Appends the UTF-8 encoding of cp (cp <= 0x10FFFF).
void append_utf8(std::string& out, uint32_t cp);

// The class of a code point: ASCII by hand, the rest from a table generated with Python's
// `regex` module (unicode_table.h), so it agrees with encoder.py for every assigned code point.
CharClass classify(uint32_t cp);

// Splits text as GPT-2's encoder.py pattern does:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// The pieces are views into text and concatenate back to it exactly.
std::vector<std::string_view> gpt2_pretokenize(std::string_view text);

// Per-code-point flags of BERT's basic tokenizer (bert_unicode_table.h has the exact rules).
enum BertFlag : uint8_t {
  kBertSpace = 1,          // white space: splits words
  kBertDrop = 2,           // control, format, unassigned, private use, U+0000, U+FFFD: removed
  kBertCjk = 4,            // CJK ideograph: a word of its own
  kBertMark = 8,           // nonspacing mark (Mn): removed by accent stripping
  kBertPunct = 16,         // punctuation: a word of its own
  kBertCased = 32,         // cased and not case-ignorable (Greek final sigma context)
  kBertCaseIgnorable = 64  // case-ignorable (Greek final sigma context)
};

// The BertFlag bits of a code point.
uint8_t bert_flags(uint32_t cp);

// drop_Mn(NFD(lower(cp))), as tokenization.py's lower() then _run_strip_accents, for a code point
// other than U+03A3 (whose lower case depends on its neighbours): writes 0 to 3 code points to out
// and returns how many ("É" -> "e", "İ" -> "i", U+0301 -> nothing, "한" -> its three jamo).
int bert_fold(uint32_t cp, uint32_t out[3]);

// BERT's basic tokenizer with do_lower_case=True (google-research/bert tokenization.py
// BasicTokenizer; Hugging Face BertTokenizer): drop controls, U+0000 and U+FFFD (so invalid UTF-8
// bytes vanish, as Python's decode("utf-8", "ignore")), split on white space, make each CJK
// ideograph a word, lower-case (Greek final sigma included), strip accents, split off each
// punctuation character. Appends the words, UTF-8, to *buf, word k ending at (*ends)[k]. With
// lower_case false (do_lower_case=False, a cased vocabulary) case and accents are kept.
void bert_pretokenize(std::string_view text, std::string* buf, std::vector<size_t>* ends,
                      bool lower_case = true);

}  // namespace llmprof::data::detail
