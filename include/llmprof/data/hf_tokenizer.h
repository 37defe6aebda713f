// Hugging Face tokenizers' tokenizer.json (the "fast" tokenizer of Llama 3, Qwen2, SmolLM2,
// Mistral, TinyLlama ...): a BPE model with its normalizer, pre-tokenizer (Split patterns run
// through PCRE2 with Unicode properties), added and special tokens, post-processor and decoder.
// encode() gives what `tokenizers.Tokenizer.encode(text).ids` (add_special_tokens=True, as
// `tokenizer(text)` in transformers) gives; decode() skips special tokens, as the library's
// decode does by default. A piece llmprof does not implement (a Unigram or WordLevel model, an
// unknown normalizer, pre-tokenizer, decoder or post-processor) is a DataError naming its type
// and its JSON path ("pre_tokenizer.pretokenizers[1].type").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/data/tokenizer.h"

namespace llmprof::data {

class HfTokenizer : public Tokenizer {
 public:
  // Ids without the post-processor's additions (no BOS/EOS): tokenizers' add_special_tokens=False.
  virtual std::vector<int32_t> encode_plain(std::string_view text) const = 0;
  // The id of a token (model vocabulary or added token), or -1 when there is none.
  virtual int32_t token_to_id(std::string_view token) const = 0;
  // The ids the post-processor puts before and after a single sequence (Llama 3: {128000}, {}).
  virtual const std::vector<int32_t>& prefix_ids() const = 0;
  virtual const std::vector<int32_t>& suffix_ids() const = 0;
};

// Reads a tokenizer.json. Throws DataError naming the file and the JSON key for a missing file,
// invalid or truncated JSON, a piece llmprof does not implement, a merge naming a token that is not
// in the vocabulary, or a regex PCRE2 rejects.
std::unique_ptr<HfTokenizer> load_hf_tokenizer(const std::string& tokenizer_json_path);

// Whether this build runs tokenizer.json regexes (Split, Digits, ByteLevel's GPT-2 pattern): it
// was built with PCRE2. Without it such a tokenizer is a DataError saying so.
bool hf_tokenizer_regex_available();

// The same from the file's text; origin names it in messages (a path, "<fuzz input>").
std::unique_ptr<HfTokenizer> parse_hf_tokenizer(const std::string& json_text,
                                                const std::string& origin);

}  // namespace llmprof::data
