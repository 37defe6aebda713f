// Tokenizers: character-level (vocab built from the corpus) and GPT-2 byte-level BPE
// (encoder.json + vocab.bpe). Token ids are int32; the model takes int64 (see loader.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::config {
struct DataConfig;
}

namespace llmprof::data {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // The built-in ones: config::name of the data.tokenizer value that builds them ("char", "gpt2",
  // "wordpiece"). A label, not a closed set: other tokenizers (a test's fake) name themselves.
  virtual std::string name() const = 0;
  virtual int64_t vocab_size() const = 0;
  // Text to ids. Throws DataError for text the tokenizer cannot represent (char: unseen char).
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // Ids to text. Throws DataError for an id outside [0, vocab_size).
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  // Writes what is needed to rebuild it into dir (char: vocab.json; gpt2: a JSON with the paths).
  virtual void save(const std::string& dir) const = 0;
  // sha256 (64 hex digits) of what maps text to ids, not of a file: the kind, every token's bytes
  // in id order, GPT-2's merges in rank order, WordPiece's lower_case. The same vocabulary read
  // from another file or folder hashes the same; two vocabularies of one size do not. Empty for
  // a tokenizer that cannot say (a test's fake).
  virtual std::string fingerprint() const { return {}; }
  // Writes the files it was built from into dir (which exists), as read, and returns their names:
  // gpt2 vocab.json + merges.txt, wordpiece vocab.txt, char vocab.json. make_tokenizer builds the
  // same tokenizer again from them (data.vocab_path, data.merges_path). Throws DataError for a
  // tokenizer that has no files (a test's fake), IoError when a file cannot be written.
  virtual std::vector<std::string> save_files(const std::string& dir) const;
};

// Character-level tokenizer: the sorted set of distinct bytes of the corpus (nanoGPT's
// shakespeare_char prepare.py). Ids follow byte order.
std::unique_ptr<Tokenizer> make_char_tokenizer(std::string_view corpus);

// Loads a char tokenizer saved by save() (dir/vocab.json). Throws DataError.
std::unique_ptr<Tokenizer> load_char_tokenizer(const std::string& dir);

// GPT-2 byte-level BPE from encoder.json and vocab.bpe. Throws DataError naming the file/line.
std::unique_ptr<Tokenizer> make_gpt2_tokenizer(const std::string& encoder_json_path,
                                               const std::string& vocab_bpe_path);

// Builds the tokenizer data.tokenizer names; corpus is used by "char" unless data.vocab_path
// names a char vocab.json that save() or save_files() wrote (a run's own vocabulary).
std::unique_ptr<Tokenizer> make_tokenizer(const config::DataConfig& cfg, std::string_view corpus);

}  // namespace llmprof::data
