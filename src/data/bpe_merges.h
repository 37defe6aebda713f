// Private to data: byte-pair merges over token ids, shared by the GPT-2 tokenizer (vocab.bpe) and
// the tokenizer.json BPE model: the merge table keyed by the id pair, and the merge loop that
// applies the lowest-ranked merge present until none is left.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace llmprof::data {

struct BpeMerge {
  int32_t rank;    // the merge's order in its file: lower merges first
  int32_t merged;  // id of left + right
};

// The pair (left, right) as one hash key.
inline uint64_t bpe_pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

using BpeMergeTable = std::unordered_map<uint64_t, BpeMerge>;  // bpe_pair_key -> merge

// Merges word in place: the lowest-ranked pair present, every occurrence left to right, until no
// pair of the table is left.
inline void apply_bpe_merges(const BpeMergeTable& merges, std::vector<int32_t>& word) {
  while (word.size() > 1) {
    const BpeMerge* best = nullptr;
    int32_t left = 0, right = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      const auto it = merges.find(bpe_pair_key(word[i], word[i + 1]));
      if (it != merges.end() && (best == nullptr || it->second.rank < best->rank)) {
        best = &it->second;
        left = word[i];
        right = word[i + 1];
      }
    }
    if (best == nullptr) return;
    size_t out = 0;
    for (size_t i = 0; i < word.size(); ++out) {
      if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
        word[out] = best->merged;
        i += 2;
      } else {
        word[out] = word[i++];
      }
    }
    word.resize(out);
  }
}

}  // namespace llmprof::data
