// BERT's uncased WordPiece tokenizer (google-research/bert tokenization.py, the same rules as
// Hugging Face's BertTokenizer with do_lower_case=True): a basic tokenizer (clean control chars,
// whitespace split, CJK characters as words, lower-case, strip accents (NFD, drop Mn), split on
// punctuation), then greedy longest-match-first WordPiece with "##" continuations, [UNK] for a
// word with no split or longer than 100 chars. The vocabulary is vocab.txt, one token per line,
// id = 0-based line number.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "llmprof/data/tokenizer.h"

namespace llmprof::data {

// Ids of the special tokens the encoder and the MLM collator need.
struct SpecialTokens {
  int32_t pad = 0;     // [PAD]
  int32_t unk = 100;   // [UNK]
  int32_t cls = 101;   // [CLS]
  int32_t sep = 102;   // [SEP]
  int32_t mask = 103;  // [MASK]
};

class WordPieceTokenizer : public Tokenizer {
 public:
  // Ids of [PAD] [UNK] [CLS] [SEP] [MASK] in this vocabulary.
  virtual SpecialTokens special() const = 0;
};

// Loads vocab.txt. Throws DataError naming the file (missing, empty, duplicate token with its line,
// or a special token absent). lower_case false: a cased vocabulary (tokenizer_config.json
// do_lower_case=false), whose words keep their case and accents.
std::unique_ptr<WordPieceTokenizer> make_wordpiece_tokenizer(const std::string& vocab_path,
                                                             bool lower_case = true);

}  // namespace llmprof::data
