// The character-level tokenizer (nanoGPT's shakespeare_char prepare.py) and make_tokenizer.
#include "llmprof/data/tokenizer.h"

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "file_io.h"
#include "llmprof/hf/files.h"
#include "tokenizer_fingerprint.h"
#include "llmprof/base/printable.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/config/config.h"
#include "llmprof/data/corpus.h"
#include "llmprof/data/hf_tokenizer.h"
#include "llmprof/data/wordpiece.h"
#include "llmprof/error.h"

namespace llmprof::data {

namespace {

// A byte as it reads in an error message: 'a' when printable, \xNN otherwise.
std::string describe_byte(unsigned char b) {
  char buf[8];
  if (b >= 0x20 && b < 0x7F) {
    std::snprintf(buf, sizeof(buf), "'%c'", b);
  } else {
    std::snprintf(buf, sizeof(buf), "\\x%02X", b);
  }
  return buf;
}

class CharTokenizer final : public Tokenizer {
 public:
  // chars: the vocabulary, id order; distinct.
  explicit CharTokenizer(std::vector<unsigned char> chars) : chars_(std::move(chars)) {
    id_of_.fill(-1);
    for (size_t i = 0; i < chars_.size(); ++i) id_of_[chars_[i]] = static_cast<int32_t>(i);
  }

  std::string name() const override {
    return std::string(config::name(config::TokenizerKind::kChar));
  }
  int64_t vocab_size() const override { return static_cast<int64_t>(chars_.size()); }

  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
      const auto b = static_cast<unsigned char>(text[i]);
      const int32_t id = id_of_[b];
      if (id < 0) {
        throw DataError("char tokenizer: unknown character " + describe_byte(b) +
                        " at byte offset " + std::to_string(i) + " (not among the " +
                        std::to_string(chars_.size()) + " characters of the vocabulary)");
      }
      ids[i] = id;
    }
    return ids;
  }

  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string text(ids.size(), '\0');
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0 || ids[i] >= vocab_size()) {
        throw DataError("char tokenizer: id " + std::to_string(ids[i]) + " at position " +
                        std::to_string(i) + " is outside [0, " + std::to_string(vocab_size()) +
                        ")");
      }
      text[i] = static_cast<char>(chars_[static_cast<size_t>(ids[i])]);
    }
    return text;
  }

  void save(const std::string& dir) const override {
    nlohmann::json j;
    j["schema_version"] = hf::kCharVocabSchemaVersion;
    j["type"] = name();
    auto& chars = j["chars"] = nlohmann::json::array();
    for (unsigned char c : chars_) chars.push_back(static_cast<int>(c));
    detail::write_text_atomic(hf::in_folder(dir, hf::kVocabJson), j.dump() + "\n");
  }

  std::string fingerprint() const override {
    std::string canonical = "llmprof tokenizer 1\nchar\n";
    detail::append_field(canonical, std::string(chars_.begin(), chars_.end()));
    return detail::sha256_hex(canonical);
  }

  std::vector<std::string> save_files(const std::string& dir) const override {
    save(dir);
    return {std::string(hf::kVocabJson)};
  }

 private:
  std::vector<unsigned char> chars_;  // id -> byte
  std::array<int32_t, 256> id_of_;    // byte -> id, -1 when absent
};

}  // namespace

std::vector<std::string> Tokenizer::save_files(const std::string& /*dir*/) const {
  throw DataError("the " + name() + " tokenizer has no files to save");
}

std::unique_ptr<Tokenizer> make_char_tokenizer(std::string_view corpus) {
  if (corpus.empty())
    throw DataError("char tokenizer: the corpus is empty, no vocabulary to build");
  std::array<bool, 256> seen{};
  for (char c : corpus) seen[static_cast<unsigned char>(c)] = true;
  std::vector<unsigned char> chars;
  for (int b = 0; b < 256; ++b) {
    if (seen[b]) chars.push_back(static_cast<unsigned char>(b));
  }
  return std::make_unique<CharTokenizer>(std::move(chars));
}

namespace {

// A char vocab.json (save()'s format) at path.
std::unique_ptr<Tokenizer> load_char_vocab(const std::string& path) {
  const std::string text = read_text_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": not valid JSON: " + printable(e.what(), 200));
  }
  if (!j.is_object() || config::find_enum<config::TokenizerKind>(j.value("type", std::string())) !=
                            config::TokenizerKind::kChar) {
    throw DataError(path + ": expected an object with \"type\": \"char\"");
  }
  const auto it = j.find("chars");
  if (it == j.end() || !it->is_array() || it->empty()) {
    throw DataError(path + ": expected \"chars\", a non-empty array of byte values");
  }
  std::vector<unsigned char> chars;
  std::array<bool, 256> seen{};
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& v = (*it)[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 255) {
      throw DataError(path + ": chars[" + std::to_string(i) + "] = " + printable_json(v) +
                      " is not a byte value in [0, 255]");
    }
    const auto b = static_cast<unsigned char>(v.get<int64_t>());
    if (seen[b]) {
      throw DataError(path + ": chars[" + std::to_string(i) + "] repeats " + describe_byte(b));
    }
    seen[b] = true;
    chars.push_back(b);
  }
  return std::make_unique<CharTokenizer>(std::move(chars));
}

}  // namespace

std::unique_ptr<Tokenizer> load_char_tokenizer(const std::string& dir) {
  return load_char_vocab(hf::in_folder(dir, hf::kVocabJson));
}

std::unique_ptr<Tokenizer> make_tokenizer(const config::DataConfig& cfg, std::string_view corpus) {
  switch (cfg.tokenizer) {
    case config::TokenizerKind::kChar:
      if (!cfg.vocab_path.empty()) {  // a run's own vocabulary, as save() wrote it
        return load_char_vocab(cfg.vocab_path);
      }
      return make_char_tokenizer(corpus);
    case config::TokenizerKind::kGpt2:
      if (cfg.vocab_path.empty() || cfg.merges_path.empty()) {
        throw DataError(
            "data.tokenizer gpt2 needs data.vocab_path (encoder.json) and data.merges_path "
            "(vocab.bpe)");
      }
      return make_gpt2_tokenizer(cfg.vocab_path, cfg.merges_path);
    case config::TokenizerKind::kWordpiece:
      if (cfg.vocab_path.empty()) {
        throw DataError("data.tokenizer wordpiece needs data.vocab_path (BERT's vocab.txt)");
      }
      return make_wordpiece_tokenizer(cfg.vocab_path, cfg.lower_case);
    case config::TokenizerKind::kHf:
      if (cfg.vocab_path.empty()) {
        throw DataError("data.tokenizer hf needs data.vocab_path (a Hugging Face tokenizer.json)");
      }
      return load_hf_tokenizer(cfg.vocab_path);
  }
  // Only a value cast from an int in code gets here.
  throw DataError("data.tokenizer: unknown tokenizer value " +
                  std::to_string(static_cast<int>(cfg.tokenizer)) +
                  " (expected char|gpt2|wordpiece|hf)");
}

}  // namespace llmprof::data
