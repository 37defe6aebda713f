// tokenizer.json's BPE model: each pre-token starts as its characters (or, with byte_fallback,
// the <0xNN> tokens of a character the vocabulary lacks, or unk), then the adjacent pair of lowest
// merge rank is merged, every occurrence left to right, until no ranked pair remains.
#include "hf_bpe.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "llmprof/base/printable.h"
#include "llmprof/base/printable_json.h"
#include "unicode.h"

namespace llmprof::data::detail {

namespace {

constexpr size_t kMaxCacheEntries = 1 << 18;  // pieces; the cache is cleared when it fills

std::string quote(const std::string& token) { return "'" + printable(token, 40) + "'"; }

}  // namespace

BpeModel::BpeModel(const nlohmann::json& model, const JsonWhere& where) {
  if (!model.is_object()) hf_fail(where, "expected a JSON object");
  const std::string type = hf_string(model, "type", where, "BPE");
  if (type != "BPE") {
    hf_fail(where.key("type"),
            "model '" + printable(type, 40) + "' is not implemented by llmprof (it has BPE only)");
  }
  const auto dropout = model.find("dropout");
  if (dropout != model.end() && !dropout->is_null() &&
      !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    hf_fail(where.key("dropout"), "BPE dropout (random merges) is not implemented by llmprof");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (!hf_string(model, key, where).empty()) {
      hf_fail(where.key(key), "a non-empty value is not implemented by llmprof");
    }
  }
  parse_vocab(hf_need(model, "vocab", where), where.key("vocab"));
  parse_merges(hf_need(model, "merges", where), where.key("merges"));
  byte_fallback_ = hf_bool(model, "byte_fallback", where, false);
  fuse_unk_ = hf_bool(model, "fuse_unk", where, false);
  ignore_merges_ = hf_bool(model, "ignore_merges", where, false);
  const std::string unk = hf_string(model, "unk_token", where);
  if (!unk.empty()) {
    const auto it = vocab_.find(unk);
    if (it == vocab_.end()) hf_fail(where.key("unk_token"), quote(unk) + " is not in model.vocab");
    unk_id_ = it->second;
  }
  byte_ids_.fill(-1);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const auto it = vocab_.find(name);
    if (it != vocab_.end()) byte_ids_[static_cast<size_t>(b)] = it->second;
  }
}

void BpeModel::parse_vocab(const nlohmann::json& v, const JsonWhere& where) {
  if (!v.is_object()) hf_fail(where, "expected an object mapping tokens to ids");
  vocab_.reserve(v.size());
  for (const auto& [token, id] : v.items()) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() > kMaxTokenId) {
      hf_fail(where, "token " + quote(token) + " has id " + printable_json(id) +
                         ", expected an integer in [0, 2^24)");
    }
    vocab_.emplace(token, static_cast<int32_t>(id.get<uint64_t>()));
  }
}

void BpeModel::parse_merges(const nlohmann::json& m, const JsonWhere& where) {
  if (!m.is_array()) hf_fail(where, "expected an array of merges");
  merges_.reserve(m.size());
  for (size_t i = 0; i < m.size(); ++i) {
    const JsonWhere at = where.index(i);
    std::string left, right;
    if (m[i].is_string()) {  // "left right"
      const std::string s = m[i].get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        hf_fail(at, "expected two tokens separated by one space, got " + quote(s));
      }
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m[i].is_array() && m[i].size() == 2 && m[i][0].is_string() &&
               m[i][1].is_string()) {  // ["left", "right"]
      left = m[i][0].get<std::string>();
      right = m[i][1].get<std::string>();
    } else {
      hf_fail(at, "expected \"left right\" or [\"left\", \"right\"]");
    }
    int32_t ids[3];
    const std::string merged = left + right;
    const std::string* names[3] = {&left, &right, &merged};
    for (int k = 0; k < 3; ++k) {
      const auto it = vocab_.find(*names[k]);
      if (it == vocab_.end()) {
        hf_fail(at, std::string(k == 2 ? "the merged token " : "token ") + quote(*names[k]) +
                        " is not in model.vocab");
      }
      ids[k] = it->second;
    }
    merges_.emplace(bpe_pair_key(ids[0], ids[1]), BpeMerge{static_cast<int32_t>(i), ids[2]});
  }
}

void BpeModel::initial_symbols(const std::string& piece, std::vector<int32_t>& word) const {
  bool last_unk = false;
  for (size_t pos = 0; pos < piece.size();) {
    size_t len = 1;
    decode_utf8(piece, pos, &len);
    const auto it = vocab_.find(piece.substr(pos, len));
    bool done = false;
    if (it != vocab_.end()) {
      word.push_back(it->second);
      done = true;
    } else if (byte_fallback_) {
      done = true;
      for (size_t k = 0; k < len; ++k)
        done = done && byte_ids_[static_cast<unsigned char>(piece[pos + k])] >= 0;
      for (size_t k = 0; done && k < len; ++k) {
        word.push_back(byte_ids_[static_cast<unsigned char>(piece[pos + k])]);
      }
    }
    if (done) {
      last_unk = false;
    } else if (unk_id_ >= 0) {  // a character with no token: unk (one per run with fuse_unk)
      if (!(fuse_unk_ && last_unk)) word.push_back(unk_id_);
      last_unk = true;
    }  // no unk_token: the character is dropped, as tokenizers does
    pos += len;
  }
}

void BpeModel::merge(std::vector<int32_t>& word) const { apply_bpe_merges(merges_, word); }

void BpeModel::tokenize(const std::string& piece, std::vector<int32_t>& ids) const {
  if (ignore_merges_) {  // Llama 3: a pre-token the vocabulary has whole is taken as is
    const auto it = vocab_.find(piece);
    if (it != vocab_.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    const auto it = cache_.find(piece);
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> word;
  word.reserve(piece.size());
  initial_symbols(piece, word);
  merge(word);
  ids.insert(ids.end(), word.begin(), word.end());
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (cache_.size() >= kMaxCacheEntries) cache_.clear();
  cache_.emplace(piece, std::move(word));
}

}  // namespace llmprof::data::detail
