// Unicode Normalization Form C (UAX #15): full canonical decomposition, canonical ordering of
// combining marks, then canonical composition of each mark with the last starter it is not
// blocked from. Qwen2's tokenizer.json normalizer. Tables: nfc_table.h (Python's unicodedata);
// Hangul syllables by the arithmetic of Unicode 3.12.
#include <algorithm>

#include "hf_tokenizer_parts.h"
#include "nfc_table.h"
#include "unicode.h"

namespace llmprof::data::detail {

namespace {

// Hangul (Unicode 3.12).
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr uint32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

uint8_t ccc(uint32_t cp) {
  if (cp < 0x300) return 0;
  const auto* end = std::end(kCccRanges);
  const auto* it = std::upper_bound(std::begin(kCccRanges), end, cp,
                                    [](uint32_t c, const CccRange& r) { return c < r.lo; });
  if (it == std::begin(kCccRanges)) return 0;
  --it;
  return cp <= it->hi ? it->ccc : 0;
}

void decompose(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto* end = std::end(kDecompositions);
  const auto* it = std::lower_bound(std::begin(kDecompositions), end, cp,
                                    [](const Decomposition& d, uint32_t c) { return d.cp < c; });
  if (it == end || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  decompose(it->first, out);
  if (it->second != 0) decompose(it->second, out);
}

// The primary composite of (a, b), or 0.
uint32_t compose(uint32_t a, uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  const auto* end = std::end(kCompositions);
  const auto* it =
      std::lower_bound(std::begin(kCompositions), end, std::make_pair(a, b),
                       [](const Composition& c, const std::pair<uint32_t, uint32_t>& k) {
                         return std::make_pair(c.first, c.second) < k;
                       });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

// NFC of valid UTF-8.
std::string nfc_valid(std::string_view text) {
  std::vector<uint32_t> cps;
  for (size_t pos = 0; pos < text.size();) {
    size_t len = 1;
    decompose(decode_utf8(text, pos, &len), cps);
    pos += len;
  }
  // Canonical ordering: a stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < cps.size();) {
    if (ccc(cps[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < cps.size() && ccc(cps[j]) != 0) ++j;
    std::stable_sort(cps.begin() + static_cast<std::ptrdiff_t>(i),
                     cps.begin() + static_cast<std::ptrdiff_t>(j),
                     [](uint32_t a, uint32_t b) { return ccc(a) < ccc(b); });
    i = j;
  }
  // Canonical composition.
  std::vector<uint32_t> out;
  out.reserve(cps.size());
  size_t starter = SIZE_MAX;
  int last_cc = 0;
  for (uint32_t c : cps) {
    const int cc = ccc(c);
    if (starter != SIZE_MAX) {
      const bool adjacent = out.size() - 1 == starter;
      if (adjacent || (last_cc != 0 && last_cc < cc)) {
        if (const uint32_t composite = compose(out[starter], c)) {
          out[starter] = composite;
          continue;
        }
      }
    }
    if (cc == 0) starter = out.size();
    last_cc = cc;
    out.push_back(c);
  }
  std::string s;
  s.reserve(text.size());
  for (uint32_t c : out) append_utf8(s, c);
  return s;
}

}  // namespace

std::string nfc(std::string_view text) {
  // Below U+0300 nothing decomposes or combines: ASCII and Latin-1 text is its own NFC.
  bool quick = true;
  for (size_t pos = 0; pos < text.size() && quick;) {
    const auto b = static_cast<unsigned char>(text[pos]);
    if (b < 0x80) {
      ++pos;
      continue;
    }
    size_t len = 1;
    const uint32_t cp = decode_utf8(text, pos, &len);
    quick = cp < 0x300 && !(cp == 0xFFFD && len == 1);
    pos += len;
  }
  if (quick) return std::string(text);
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {  // valid runs normalized, invalid bytes kept as they are
    const size_t bad = find_invalid_utf8(text.substr(pos));
    const size_t run_end = bad == std::string_view::npos ? text.size() : pos + bad;
    out += nfc_valid(text.substr(pos, run_end - pos));
    if (run_end == text.size()) break;
    size_t len = 1;
    decode_utf8(text, run_end, &len);
    out.append(text.substr(run_end, len));
    pos = run_end + len;
  }
  return out;
}

const char* nfc_unicode_version() { return kNfcUnicodeVersion; }

}  // namespace llmprof::data::detail
