// GPT-2's byte-level BPE, as OpenAI's gpt-2/src/encoder.py: text is split by GPT-2's pattern
// (unicode.h), each piece's bytes map to printable stand-in characters (bytes_to_unicode), and
// adjacent symbols merge by the rank of the pair in vocab.bpe until no ranked pair remains.
// Symbols are handled as token ids rather than strings: encoder.json is a bijection, so merging
// ids is merging strings.
#include <algorithm>
#include <array>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "bpe_merges.h"
#include "file_io.h"
#include "llmprof/hf/files.h"
#include "tokenizer_fingerprint.h"
#include "llmprof/base/printable.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/config/enums.h"
#include "llmprof/data/corpus.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/error.h"
#include "unicode.h"

namespace fs = std::filesystem;

namespace llmprof::data {

namespace {

constexpr size_t kMaxCacheEntries = 1 << 18;  // words; the cache is cleared when it fills

// encoder.py's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68
// bytes (controls, space, 0x7F-0xA0, 0xAD) map to 256, 257, ... in byte order, so no token
// contains white space or control characters. Returns the code point of each byte.
std::array<uint32_t, 256> bytes_to_unicode() {
  std::array<uint32_t, 256> cp{};
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    cp[b] = printable ? b : next++;
  }
  return cp;
}

// A token for a message: its stand-in characters, shortened.
std::string quote(const std::string& token) {
  return "'" + printable(token, 40) + "'";
}

class Gpt2Tokenizer final : public Tokenizer {
 public:
  Gpt2Tokenizer(const std::string& encoder_path, const std::string& bpe_path)
      : encoder_path_(fs::absolute(encoder_path).string()),
        bpe_path_(fs::absolute(bpe_path).string()) {
    const auto ids = load_encoder(encoder_path);
    load_merges(bpe_path, ids);
  }

  std::string name() const override {
    return std::string(config::name(config::TokenizerKind::kGpt2));
  }
  int64_t vocab_size() const override { return static_cast<int64_t>(token_bytes_.size()); }

  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    ids.reserve(text.size() / 3 + 1);
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (std::string_view piece : detail::gpt2_pretokenize(text)) {
      std::string key(piece);
      auto it = cache_.find(key);
      if (it == cache_.end()) {
        if (cache_.size() >= kMaxCacheEntries) cache_.clear();
        it = cache_.emplace(std::move(key), bpe(piece)).first;
      }
      ids.insert(ids.end(), it->second.begin(), it->second.end());
    }
    return ids;
  }

  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0 || ids[i] >= vocab_size()) {
        throw DataError("gpt2 tokenizer: id " + std::to_string(ids[i]) + " at position " +
                        std::to_string(i) + " is outside [0, " + std::to_string(vocab_size()) +
                        ")");
      }
      text += token_bytes_[static_cast<size_t>(ids[i])];
    }
    return text;
  }

  void save(const std::string& dir) const override {
    nlohmann::json j;
    j["schema_version"] = hf::kGpt2TokenizerSchemaVersion;
    j["type"] = name();
    j["encoder_json"] = encoder_path_;
    j["vocab_bpe"] = bpe_path_;
    j["vocab_size"] = vocab_size();
    detail::write_text_atomic(hf::in_folder(dir, hf::kTokenizerJson), j.dump(2) + "\n");
  }

  // Tokens by id, then the merges by rank as (left, right, merged) ids.
  std::string fingerprint() const override {
    std::string canonical = "llmprof tokenizer 1\ngpt2\n";
    detail::append_u32(canonical, static_cast<uint32_t>(token_bytes_.size()));
    for (const std::string& t : token_bytes_) detail::append_field(canonical, t);
    std::vector<std::pair<int32_t, uint64_t>> by_rank;  // (rank, pair key)
    by_rank.reserve(merges_.size());
    for (const auto& [key, m] : merges_) by_rank.emplace_back(m.rank, key);
    std::sort(by_rank.begin(), by_rank.end());
    detail::append_u32(canonical, static_cast<uint32_t>(by_rank.size()));
    for (const auto& [rank, key] : by_rank) {
      detail::append_u32(canonical, static_cast<uint32_t>(key >> 32));
      detail::append_u32(canonical, static_cast<uint32_t>(key & 0xFFFFFFFFu));
      detail::append_u32(canonical, static_cast<uint32_t>(merges_.at(key).merged));
    }
    return detail::sha256_hex(canonical);
  }

  // Hugging Face's names for OpenAI's encoder.json and vocab.bpe (the same formats).
  std::vector<std::string> save_files(const std::string& dir) const override {
    detail::write_text_atomic(hf::in_folder(dir, hf::kVocabJson), encoder_text_);
    detail::write_text_atomic(hf::in_folder(dir, hf::kMergesTxt), merges_text_);
    return {std::string(hf::kVocabJson), std::string(hf::kMergesTxt)};
  }

 private:

  // Reads encoder.json (stand-in string -> id) into token_bytes_ and byte_id_; returns the map.
  std::unordered_map<std::string, int32_t> load_encoder(const std::string& path) {
    encoder_text_ = read_text_file(path);
    const std::string& text = encoder_text_;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw DataError(path + ": not valid JSON: " + printable(e.what(), 200));
    }
    if (!j.is_object() || j.empty()) {
      throw DataError(path + ": expected a JSON object mapping tokens to ids");
    }
    const auto n = static_cast<int64_t>(j.size());
    std::unordered_map<std::string, int32_t> ids;
    std::unordered_map<uint32_t, unsigned char> byte_of;  // stand-in code point -> byte
    const auto byte_cp = bytes_to_unicode();
    for (int b = 0; b < 256; ++b) byte_of[byte_cp[b]] = static_cast<unsigned char>(b);
    token_bytes_.assign(static_cast<size_t>(n), std::string());
    std::vector<bool> seen(static_cast<size_t>(n), false);
    for (const auto& [token, value] : j.items()) {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= n) {
        throw DataError(path + ": token " + quote(token) + " has id " + printable_json(value) +
                        ", expected an integer in [0, " + std::to_string(n) + ")");
      }
      const auto id = static_cast<int32_t>(value.get<int64_t>());
      if (seen[static_cast<size_t>(id)]) {
        throw DataError(path + ": id " + std::to_string(id) + " is used twice (again by " +
                        quote(token) + ")");
      }
      seen[static_cast<size_t>(id)] = true;
      std::string& bytes = token_bytes_[static_cast<size_t>(id)];
      for (size_t pos = 0; pos < token.size();) {
        size_t len = 0;
        const auto it = byte_of.find(detail::decode_utf8(token, pos, &len));
        if (it == byte_of.end()) {
          throw DataError(path + ": token " + quote(token) +
                          " has a character outside GPT-2's byte alphabet");
        }
        bytes += static_cast<char>(it->second);
        pos += len;
      }
      ids.emplace(token, id);
    }
    for (int b = 0; b < 256; ++b) {
      std::string stand_in;
      detail::append_utf8(stand_in, byte_cp[b]);
      const auto it = ids.find(stand_in);
      if (it == ids.end()) {
        throw DataError(path + ": no token for the single byte " + std::to_string(b) +
                        " (stand-in " + quote(stand_in) + ")");
      }
      byte_id_[b] = it->second;
    }
    return ids;
  }

  // Reads vocab.bpe: an optional "#version" line, then one "left right" merge per line.
  void load_merges(const std::string& path, const std::unordered_map<std::string, int32_t>& ids) {
    merges_text_ = read_text_file(path);
    const std::string& text = merges_text_;
    int32_t rank = 0;
    int64_t line_no = 0;
    for (size_t pos = 0; pos < text.size();) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
      const std::string where = path + ":" + std::to_string(line_no) + ": ";
      const size_t space = line.find(' ');
      if (space == 0 || space == std::string::npos || space + 1 == line.size() ||
          line.find(' ', space + 1) != std::string::npos) {
        throw DataError(where + "expected two symbols separated by one space, got " + quote(line));
      }
      const std::string left = line.substr(0, space);
      const std::string right = line.substr(space + 1);
      int32_t sym[3];
      const std::string* names[3] = {&left, &right, nullptr};
      const std::string merged = left + right;
      names[2] = &merged;
      for (int k = 0; k < 3; ++k) {
        const auto it = ids.find(*names[k]);
        if (it == ids.end()) {
          throw DataError(where + "symbol " + quote(*names[k]) + " is not in the encoder (" +
                          encoder_path_ + ")");
        }
        sym[k] = it->second;
      }
      merges_[bpe_pair_key(sym[0], sym[1])] = BpeMerge{rank++, sym[2]};  // a repeat outranks, as dict()
    }
    if (merges_.empty()) throw DataError(path + ": no merges");
  }

  // encoder.py's bpe(): repeatedly merge every occurrence (left to right, non-overlapping) of
  // the adjacent pair with the lowest rank, until no adjacent pair has a rank.
  std::vector<int32_t> bpe(std::string_view piece) const {
    std::vector<int32_t> word;
    word.reserve(piece.size());
    for (char c : piece) word.push_back(byte_id_[static_cast<unsigned char>(c)]);
    apply_bpe_merges(merges_, word);
    return word;
  }

  std::string encoder_path_;                    // absolute
  std::string bpe_path_;                        // absolute
  std::string encoder_text_, merges_text_;      // the files as read (save_files)
  std::vector<std::string> token_bytes_;        // id -> the raw bytes it stands for
  std::array<int32_t, 256> byte_id_{};          // byte -> id of its single-byte token
  BpeMergeTable merges_;  // bpe_pair_key(left, right) -> merge, rank = line order in vocab.bpe
  mutable std::mutex cache_mu_;                 // encode() may run on several threads
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;  // piece -> ids
};

}  // namespace

std::unique_ptr<Tokenizer> make_gpt2_tokenizer(const std::string& encoder_json_path,
                                               const std::string& vocab_bpe_path) {
  return std::make_unique<Gpt2Tokenizer>(encoder_json_path, vocab_bpe_path);
}

}  // namespace llmprof::data
