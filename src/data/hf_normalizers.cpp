// tokenizer.json's normalizers (NFC, Prepend, Replace, Sequence) and decoders (ByteLevel,
// Metaspace, ByteFallback, Fuse, Strip, Replace, Sequence), as the tokenizers library applies them.
#include <nlohmann/json.hpp>

#include "hf_tokenizer_parts.h"
#include "llmprof/base/printable.h"
#include "unicode.h"

namespace llmprof::data::detail {

namespace {

// ---------------------------------------------------------------------------------------------
// Normalizers

class NfcNormalizer final : public Normalizer {
 public:
  void normalize(std::string& text) const override { text = nfc(text); }
};

// Prepend: puts `prepend` before a non-empty text (Llama 2's "▁").
class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string p) : prepend_(std::move(p)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prepend_);
  }

 private:
  std::string prepend_;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(std::unique_ptr<Regex> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(std::string& text) const override { text = pattern_->replace_all(text, content_); }

 private:
  std::unique_ptr<Regex> pattern_;
  std::string content_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts)
      : parts_(std::move(parts)) {}
  void normalize(std::string& text) const override {
    for (const auto& p : parts_) p->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

// ---------------------------------------------------------------------------------------------
// Decoders

// Stand-in characters back to bytes; a token with a character outside the alphabet (an added
// token such as "<|im_start|>" in another script) keeps its own bytes whole. tokenizers then
// replaces invalid UTF-8 by U+FFFD; llmprof keeps the bytes, so byte-level text round-trips.
class ByteLevelDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::string bytes;
      bool all = true;
      for (size_t pos = 0; pos < t.size() && all;) {
        size_t len = 1;
        const int b = byte_level_byte(decode_utf8(t, pos, &len));
        all = b >= 0;
        bytes += static_cast<char>(b);
        pos += len;
      }
      if (all) t = std::move(bytes);
    }
  }
};

// The replacement character back to spaces, except in the first token, which loses every one
// (as tokenizers does) unless prepend_scheme is never.
class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first)
      : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (size_t pos = 0; pos < t.size();) {
        if (t.compare(pos, replacement_.size(), replacement_) == 0) {
          if (!(i == 0 && strip_first_)) out += ' ';
          pos += replacement_.size();
        } else {
          out += t[pos++];
        }
      }
      tokens[i] = std::move(out);
    }
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

// Runs of <0xNN> tokens become their bytes when those are valid UTF-8, else one U+FFFD per byte.
class ByteFallbackDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    size_t pending_count = 0;
    auto flush = [&] {
      if (pending_count == 0) return;
      if (find_invalid_utf8(pending) == std::string_view::npos) {
        out.push_back(pending);
      } else {
        for (size_t k = 0; k < pending_count; ++k) out.emplace_back("\xEF\xBF\xBD");
      }
      pending.clear();
      pending_count = 0;
    };
    for (std::string& t : tokens) {
      if (const int b = byte_token(t); b >= 0) {
        pending += static_cast<char>(b);
        ++pending_count;
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens = std::move(out);
  }

  // The byte of a "<0xNN>" token, or -1.
  static int byte_token(const std::string& t) {
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
    int v = 0;
    for (int k = 3; k < 5; ++k) {
      const char c = t[static_cast<size_t>(k)];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                           : -1;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

// Strip: up to `start` leading and `stop` trailing copies of the character `content`, per token.
class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, int64_t start, int64_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode(std::vector<std::string>& tokens) const override {
    const size_t n = content_.size();
    for (std::string& t : tokens) {
      size_t b = 0;
      size_t e = t.size();
      for (int64_t k = 0; k < start_ && e - b >= n && t.compare(b, n, content_) == 0; ++k) b += n;
      for (int64_t k = 0; k < stop_ && e - b >= n && t.compare(e - n, n, content_) == 0; ++k) {
        e -= n;
      }
      t = t.substr(b, e - b);
    }
  }

 private:
  std::string content_;
  int64_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::unique_ptr<Regex> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) t = pattern_->replace_all(t, content_);
  }

 private:
  std::unique_ptr<Regex> pattern_;
  std::string content_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts)
      : parts_(std::move(parts)) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (const auto& p : parts_) p->decode(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

const nlohmann::json& need_array(const nlohmann::json& j,
                                 const std::string& key,
                                 const JsonWhere& where) {
  const nlohmann::json& a = hf_need(j, key, where);
  if (!a.is_array()) hf_fail(where.key(key), "expected an array");
  return a;
}

int64_t need_count(const nlohmann::json& j, const std::string& key, const JsonWhere& where) {
  const nlohmann::json& v = hf_need(j, key, where);
  if (!v.is_number_unsigned()) hf_fail(where.key(key), "expected a count (0, 1, ...)");
  return v.get<int64_t>();
}

}  // namespace

std::unique_ptr<Normalizer> parse_normalizer(const nlohmann::json& j, const JsonWhere& where) {
  if (j.is_null()) return nullptr;
  const std::string type = hf_type(j, where);
  if (type == "NFC") return std::make_unique<NfcNormalizer>();
  if (type == "Prepend") {
    return std::make_unique<PrependNormalizer>(hf_string(j, "prepend", where));
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(
        parse_pattern(hf_need(j, "pattern", where), where.key("pattern")),
        hf_string(j, "content", where));
  }
  if (type == "Sequence") {
    const nlohmann::json& a = need_array(j, "normalizers", where);
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (size_t i = 0; i < a.size(); ++i) {
      auto p = parse_normalizer(a[i], where.key("normalizers").index(i));
      if (p) parts.push_back(std::move(p));
    }
    return std::make_unique<SequenceNormalizer>(std::move(parts));
  }
  hf_fail(where.key("type"), "normalizer '" + printable(type, 40) +
                                 "' is not implemented by llmprof (it has NFC, Prepend, "
                                 "Replace, Sequence)");
}

std::unique_ptr<Decoder> parse_decoder(const nlohmann::json& j, const JsonWhere& where) {
  if (j.is_null()) return nullptr;
  const std::string type = hf_type(j, where);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Metaspace") {
    const std::string scheme = hf_string(j, "prepend_scheme", where, "");
    const bool strip =
        scheme.empty() ? hf_bool(j, "add_prefix_space", where, true) : scheme != "never";
    return std::make_unique<MetaspaceDecoder>(hf_string(j, "replacement", where, "\xE2\x96\x81"),
                                              strip);
  }
  if (type == "Strip") {
    return std::make_unique<StripDecoder>(hf_string(j, "content", where, " "),
                                          need_count(j, "start", where),
                                          need_count(j, "stop", where));
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(
        parse_pattern(hf_need(j, "pattern", where), where.key("pattern")),
        hf_string(j, "content", where));
  }
  if (type == "Sequence") {
    const nlohmann::json& a = need_array(j, "decoders", where);
    std::vector<std::unique_ptr<Decoder>> parts;
    for (size_t i = 0; i < a.size(); ++i) {
      auto p = parse_decoder(a[i], where.key("decoders").index(i));
      if (p) parts.push_back(std::move(p));
    }
    return std::make_unique<SequenceDecoder>(std::move(parts));
  }
  hf_fail(where.key("type"), "decoder '" + printable(type, 40) +
                                 "' is not implemented by llmprof (it has ByteLevel, Metaspace, "
                                 "ByteFallback, Fuse, Strip, Replace, Sequence)");
}

}  // namespace llmprof::data::detail
