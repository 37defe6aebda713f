// tokenizer.json's BPE model, private to the data concern: vocab, ranked merges (either form),
// byte_fallback, unk_token with fuse_unk, ignore_merges.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "bpe_merges.h"

#include "hf_tokenizer_parts.h"

namespace llmprof::data::detail {

class BpeModel {
 public:
  // Parses the "model" object. Throws DataError naming the key (model.merges[12]: ...).
  BpeModel(const nlohmann::json& model, const JsonWhere& where);

  // Appends the ids of one pre-token (a piece in the model's alphabet). Thread-safe.
  void tokenize(const std::string& piece, std::vector<int32_t>& ids) const;

  // token -> id of the model vocabulary.
  const std::unordered_map<std::string, int32_t>& vocab() const { return vocab_; }

 private:
  void parse_vocab(const nlohmann::json& v, const JsonWhere& where);
  void parse_merges(const nlohmann::json& m, const JsonWhere& where);
  void initial_symbols(const std::string& piece, std::vector<int32_t>& word) const;
  void merge(std::vector<int32_t>& word) const;

  std::unordered_map<std::string, int32_t> vocab_;
  BpeMergeTable merges_;  // bpe_pair_key(left, right) -> merge, rank = order in model.merges
  std::array<int32_t, 256> byte_ids_{};         // "<0xNN>" ids, -1 where absent
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;  // piece -> ids
};

}  // namespace llmprof::data::detail
