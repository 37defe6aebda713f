// BERT's uncased WordPiece tokenizer (google-research/bert tokenization.py FullTokenizer with
// do_lower_case=True; Hugging Face BertTokenizer): detail::bert_pretokenize (unicode.h) cuts the
// text into lower-cased, accent-stripped words, then each word is split greedily, longest match
// first, into vocabulary pieces, continuations carrying a "##" prefix:
//   "unaffable" -> "una", "##ffa", "##ble"
// A word longer than 100 characters, or with a position where no piece matches, is one [UNK].
//
// Where the two references differ we follow Hugging Face, the home of the DistilBERT weights:
// every C* code point is dropped as a control (google drops Cc/Cf only, keeping private-use and
// unassigned ones as [UNK]), and words are capped at 100 characters (google: 200). Text such as
// "[MASK]" is ordinary text (split into "[", "mask", "]"), as in google's tokenizer; Hugging Face
// would match it as the special token. HF's extra NFC pass before splitting is skipped: NFD after
// it undoes it except for the order of stripped marks.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "file_io.h"
#include "llmprof/hf/files.h"
#include "tokenizer_fingerprint.h"
#include "llmprof/config/enums.h"
#include "llmprof/data/corpus.h"
#include "llmprof/data/wordpiece.h"
#include "llmprof/base/printable.h"
#include "llmprof/error.h"
#include "unicode.h"

namespace fs = std::filesystem;

namespace llmprof::data {

namespace {

constexpr size_t kMaxInputCharsPerWord = 100;  // BertTokenizer's max_input_chars_per_word
constexpr const char* kContinuation = "##";

// UTF-8 characters in s: bytes that are not continuation bytes (10xxxxxx).
size_t utf8_chars(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// A token for a message: quoted, shortened.
std::string quote(const std::string& token) {
  return "'" + printable(token, 40) + "'";
}

class WordPieceTokenizerImpl final : public WordPieceTokenizer {
 public:
  WordPieceTokenizerImpl(const std::string& vocab_path, bool lower_case)
      : vocab_path_(fs::absolute(vocab_path).string()), lower_case_(lower_case) {
    load_vocab(vocab_path);
  }

  std::string name() const override {
    return std::string(config::name(config::TokenizerKind::kWordpiece));
  }
  int64_t vocab_size() const override { return static_cast<int64_t>(tokens_.size()); }
  SpecialTokens special() const override { return special_; }

  std::vector<int32_t> encode(std::string_view text) const override {
    std::string words;         // the basic tokenizer's words, back to back
    std::vector<size_t> ends;  // word k is words[ends[k-1], ends[k])
    detail::bert_pretokenize(text, &words, &ends, lower_case_);
    std::vector<int32_t> ids;
    ids.reserve(ends.size() + ends.size() / 4);
    std::string key;              // lookup buffer, reused
    std::vector<size_t> offsets;  // byte offset of each character of a word, then its size
    size_t begin = 0;
    for (const size_t end : ends) {
      wordpiece(std::string_view(words).substr(begin, end - begin), &key, &offsets, &ids);
      begin = end;
    }
    return ids;
  }

  // Tokens joined by spaces, a "##" continuation glued to the token before it: Hugging Face's
  // convert_tokens_to_string, " ".join(tokens).replace(" ##", "").strip().
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0 || ids[i] >= vocab_size()) {
        throw DataError("wordpiece tokenizer: id " + std::to_string(ids[i]) + " at position " +
                        std::to_string(i) + " is outside [0, " + std::to_string(vocab_size()) +
                        ")");
      }
      const std::string& token = tokens_[static_cast<size_t>(ids[i])];
      if (i > 0 && token.compare(0, 2, kContinuation) == 0) {
        text.append(token, 2, std::string::npos);
      } else {
        if (i > 0) text += ' ';
        text += token;
      }
    }
    return text;
  }

  void save(const std::string& dir) const override {
    nlohmann::json j;
    j["schema_version"] = hf::kWordPieceTokenizerSchemaVersion;
    j["type"] = name();
    j["vocab_path"] = vocab_path_;
    j["vocab_size"] = vocab_size();
    j["lower_case"] = lower_case_;
    detail::write_text_atomic(hf::in_folder(dir, hf::kTokenizerJson), j.dump(2) + "\n");
  }

  std::string fingerprint() const override {
    std::string canonical = "llmprof tokenizer 1\nwordpiece\n";
    canonical += lower_case_ ? "lower_case 1\n" : "lower_case 0\n";
    detail::append_u32(canonical, static_cast<uint32_t>(tokens_.size()));
    for (const std::string& t : tokens_) detail::append_field(canonical, t);
    return detail::sha256_hex(canonical);
  }

  // vocab.txt, and tokenizer_config.json with do_lower_case (what Hugging Face reads it from).
  std::vector<std::string> save_files(const std::string& dir) const override {
    detail::write_text_atomic(hf::in_folder(dir, hf::kVocabTxt), vocab_text_);
    const nlohmann::json config = {{"do_lower_case", lower_case_}};
    detail::write_text_atomic(hf::in_folder(dir, hf::kTokenizerConfigJson), config.dump(2) + "\n");
    return {std::string(hf::kVocabTxt), std::string(hf::kTokenizerConfigJson)};
  }

 private:
  // vocab.txt: one token per line (LF or CRLF), id = 0-based line number.
  void load_vocab(const std::string& path) {
    std::string& text = vocab_text_;
    try {
      text = read_text_file(path);  // throws for a missing, unreadable or empty file
    } catch (const DataError& e) {
      throw DataError(std::string("wordpiece vocab: ") + e.what());
    }
    for (size_t pos = 0; pos < text.size();) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string token = text.substr(pos, end - pos);
      pos = end + 1;
      if (!token.empty() && token.back() == '\r') token.pop_back();
      const int64_t line = static_cast<int64_t>(tokens_.size()) + 1;
      const std::string where = path + ":" + std::to_string(line) + ": ";
      if (token.find_first_not_of(" \t") == std::string::npos) {
        throw DataError(where +
                        "blank line (every line of vocab.txt is a token; its id is the "
                        "line number - 1)");
      }
      const auto [it, inserted] = ids_.emplace(token, static_cast<int32_t>(tokens_.size()));
      if (!inserted) {
        throw DataError(where + "duplicate token " + quote(token) + " (first at line " +
                        std::to_string(it->second + 1) + ")");
      }
      max_token_chars_ = std::max(max_token_chars_, utf8_chars(token));
      tokens_.push_back(std::move(token));
    }
    const std::pair<const char*, int32_t*> specials[] = {{"[PAD]", &special_.pad},
                                                         {"[UNK]", &special_.unk},
                                                         {"[CLS]", &special_.cls},
                                                         {"[SEP]", &special_.sep},
                                                         {"[MASK]", &special_.mask}};
    for (const auto& [name, id] : specials) {
      const auto it = ids_.find(name);
      if (it == ids_.end()) {
        throw DataError(path + ": special token " + name + " is missing (" +
                        std::to_string(tokens_.size()) +
                        " tokens read; a BERT vocab.txt has [PAD] [UNK] [CLS] [SEP] [MASK])");
      }
      *id = it->second;
    }
  }

  // Greedy longest-match-first split of one word (WordpieceTokenizer.tokenize), appending ids.
  // Candidate pieces are at most max_token_chars_ long: no longer one can be in the vocabulary.
  void wordpiece(std::string_view word,
                 std::string* key,
                 std::vector<size_t>* offsets,
                 std::vector<int32_t>* ids) const {
    offsets->clear();
    for (size_t b = 0; b < word.size(); ++b) {
      if ((static_cast<unsigned char>(word[b]) & 0xC0) != 0x80) offsets->push_back(b);
    }
    const size_t n = offsets->size();
    offsets->push_back(word.size());
    if (n > kMaxInputCharsPerWord) {
      ids->push_back(special_.unk);
      return;
    }
    const size_t first = ids->size();
    for (size_t start = 0; start < n;) {
      int32_t found = -1;
      size_t end = std::min(n, start + max_token_chars_);
      for (; end > start; --end) {
        key->assign(start > 0 ? kContinuation : "");
        key->append(word.substr((*offsets)[start], (*offsets)[end] - (*offsets)[start]));
        const auto it = ids_.find(*key);
        if (it != ids_.end()) {
          found = it->second;
          break;
        }
      }
      if (found < 0) {  // no piece fits here: the whole word is unknown
        ids->resize(first);
        ids->push_back(special_.unk);
        return;
      }
      ids->push_back(found);
      start = end;
    }
  }

  std::string vocab_path_;                        // absolute
  std::string vocab_text_;                        // vocab.txt as read (save_files)
  bool lower_case_;                               // uncased vocabulary (do_lower_case)
  std::vector<std::string> tokens_;               // id -> token
  std::unordered_map<std::string, int32_t> ids_;  // token -> id
  size_t max_token_chars_ = 0;                    // longest token, in characters
  SpecialTokens special_;
};

}  // namespace

std::unique_ptr<WordPieceTokenizer> make_wordpiece_tokenizer(const std::string& vocab_path,
                                                             bool lower_case) {
  return std::make_unique<WordPieceTokenizerImpl>(vocab_path, lower_case);
}

}  // namespace llmprof::data
