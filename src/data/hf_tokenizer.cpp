// A Hugging Face tokenizer.json as the tokenizers library runs it: added tokens are cut out first
// (longest match, leftmost; those with normalized=false on the raw text, the others after the
// normalizer), the normalizer runs on the rest, the pre-tokenizer splits it, the BPE model maps
// each piece to ids, and the post-processor adds its BOS/EOS. decode() maps ids to tokens, drops
// special ones and runs the decoder.
#include "llmprof/data/hf_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "file_io.h"
#include "llmprof/hf/files.h"
#include "hf_bpe.h"
#include "hf_tokenizer_parts.h"
#include "llmprof/base/printable.h"
#include "llmprof/base/printable_json.h"
#include "llmprof/config/enums.h"
#include "llmprof/data/corpus.h"
#include "llmprof/error.h"
#include "tokenizer_fingerprint.h"
#include "unicode.h"

namespace fs = std::filesystem;

namespace llmprof::data {

namespace {

using detail::JsonWhere;
using detail::Split;

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false, lstrip = false, rstrip = false, normalized = false;
};

// The added tokens one pass matches, by first byte, longest first.
class AddedMatcher {
 public:
  void add(const AddedToken* t, std::string content) {
    if (content.empty()) return;
    by_first_[static_cast<unsigned char>(content[0])].emplace_back(std::move(content), t);
  }
  // Longest first within each first byte, once all are added.
  void sort() {
    for (auto& [first, list] : by_first_) {
      std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
        return a.first.size() > b.first.size();
      });
    }
  }
  bool empty() const { return by_first_.empty(); }

  // Cuts the added tokens out of each text split.
  void split(std::vector<Split>& splits) const {
    if (empty()) return;
    std::vector<Split> out;
    for (Split& s : splits) {
      if (s.added_id >= 0) {
        out.push_back(std::move(s));
      } else {
        split_one(s, out);
      }
    }
    splits = std::move(out);
  }

 private:
  static bool is_space(const std::string& t, size_t pos, size_t* len) {
    return detail::classify(detail::decode_utf8(t, pos, len)) == detail::CharClass::kSpace;
  }

  void split_one(const Split& s, std::vector<Split>& out) const {
    const std::string& t = s.text;
    size_t text_begin = 0;  // start of the text not yet emitted
    for (size_t i = 0; i < t.size();) {
      const AddedToken* hit = nullptr;
      size_t hit_len = 0;
      const auto list = by_first_.find(static_cast<unsigned char>(t[i]));
      if (list != by_first_.end()) {
        for (const auto& [content, token] : list->second) {
          if (t.compare(i, content.size(), content) == 0) {
            hit = token;
            hit_len = content.size();
            break;
          }
        }
      }
      if (hit == nullptr) {
        ++i;
        continue;
      }
      size_t b = i, e = i + hit_len;
      while (hit->lstrip && b > text_begin) {  // absorb white space on the left
        size_t p = b - 1;
        while (p > text_begin && (static_cast<unsigned char>(t[p]) & 0xC0) == 0x80) --p;
        size_t len = 1;
        if (!is_space(t, p, &len)) break;
        b = p;
      }
      size_t len = 1;
      while (hit->rstrip && e < t.size() && is_space(t, e, &len)) e += len;
      if (b > text_begin)
        out.push_back({t.substr(text_begin, b - text_begin), -1, s.at_start && text_begin == 0});
      out.push_back({hit->content, hit->id, false});
      text_begin = i = e;
    }
    if (text_begin < t.size()) {
      out.push_back({t.substr(text_begin), -1, s.at_start && text_begin == 0});
    }
  }

  std::unordered_map<unsigned char, std::vector<std::pair<std::string, const AddedToken*>>>
      by_first_;
};

// "single" of TemplateProcessing (and the older Roberta/Bert processors): the ids around a text.
struct PostIds {
  std::vector<int32_t> prefix, suffix;
};

PostIds parse_template(const nlohmann::json& j, const JsonWhere& where) {
  const nlohmann::json& single = detail::hf_need(j, "single", where);
  const nlohmann::json& specials = detail::hf_need(j, "special_tokens", where);
  if (!single.is_array()) detail::hf_fail(where.key("single"), "expected an array");
  PostIds ids;
  bool seen_a = false;
  for (size_t i = 0; i < single.size(); ++i) {
    const JsonWhere at = where.key("single").index(i);
    if (single[i].contains("Sequence")) {
      const std::string seq = detail::hf_string(single[i]["Sequence"], "id", at.key("Sequence"));
      if (seq != "A") detail::hf_fail(at, "a single sequence template names only sequence A");
      seen_a = true;
      continue;
    }
    if (!single[i].contains("SpecialToken")) {
      detail::hf_fail(at, "expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    }
    const std::string name =
        detail::hf_string(single[i]["SpecialToken"], "id", at.key("SpecialToken"));
    const JsonWhere entry = where.key("special_tokens").key(printable(name, 40));
    if (!specials.is_object() || !specials.contains(name)) detail::hf_fail(entry, "missing");
    const nlohmann::json& list = detail::hf_need(specials[name], "ids", entry);
    if (!list.is_array()) detail::hf_fail(entry.key("ids"), "expected an array");
    for (const auto& id : list) {
      if (!id.is_number_unsigned() || id.get<uint64_t>() > detail::kMaxTokenId) {
        detail::hf_fail(entry.key("ids"), "expected token ids");
      }
      (seen_a ? ids.suffix : ids.prefix).push_back(id.get<int32_t>());
    }
  }
  return ids;
}

PostIds parse_post_processor(const nlohmann::json& j, const JsonWhere& where) {
  if (j.is_null()) return {};
  const std::string type = detail::hf_type(j, where);
  if (type == "ByteLevel") return {};  // offsets only
  if (type == "TemplateProcessing") return parse_template(j, where);
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    auto id_of = [&](const char* key) {
      const nlohmann::json& v = detail::hf_need(j, key, where);
      if (!v.is_array() || v.size() != 2 || !v[1].is_number_unsigned() ||
          v[1].get<uint64_t>() > detail::kMaxTokenId) {
        detail::hf_fail(where.key(key), "expected [token, id]");
      }
      return v[1].get<int32_t>();
    };
    return {{id_of("cls")}, {id_of("sep")}};
  }
  if (type == "Sequence") {
    const nlohmann::json& a = detail::hf_need(j, "processors", where);
    if (!a.is_array()) detail::hf_fail(where.key("processors"), "expected an array");
    PostIds all;
    for (size_t i = 0; i < a.size(); ++i) {  // each wraps what the ones before produced
      const PostIds p = parse_post_processor(a[i], where.key("processors").index(i));
      all.prefix.insert(all.prefix.begin(), p.prefix.begin(), p.prefix.end());
      all.suffix.insert(all.suffix.end(), p.suffix.begin(), p.suffix.end());
    }
    return all;
  }
  detail::hf_fail(where.key("type"), "post-processor '" + printable(type, 40) +
                                         "' is not implemented by llmprof (it has "
                                         "TemplateProcessing, ByteLevel, RobertaProcessing, "
                                         "BertProcessing, Sequence)");
}

class HfBpeTokenizer final : public HfTokenizer {
 public:
  HfBpeTokenizer(const std::string& text, const std::string& origin) : text_(text) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw DataError(origin + ": not valid JSON (truncated?): " + printable(e.what(), 200));
    }
    const JsonWhere root{origin, ""};
    if (!j.is_object()) detail::hf_fail(root, "expected a JSON object (a tokenizer.json)");
    if (llmprof::detail::json_deeper_than(j, 64))
      detail::hf_fail(root, "JSON nested deeper than 64 levels");
    // "truncation" and "padding" are ignored: transformers' tokenizer(text) turns them off
    // unless the call asks for them, and llmprof asks for neither.
    model_ =
        std::make_unique<detail::BpeModel>(detail::hf_need(j, "model", root), root.key("model"));
    normalizer_ =
        detail::parse_normalizer(j.value("normalizer", nlohmann::json()), root.key("normalizer"));
    pre_tokenizer_ = detail::parse_pre_tokenizer(j.value("pre_tokenizer", nlohmann::json()),
                                                 root.key("pre_tokenizer"));
    decoder_ = detail::parse_decoder(j.value("decoder", nlohmann::json()), root.key("decoder"));
    post_ = parse_post_processor(j.value("post_processor", nlohmann::json()),
                                 root.key("post_processor"));
    build_tokens();
    parse_added(j.value("added_tokens", nlohmann::json::array()), root.key("added_tokens"));
    for (const auto* list : {&post_.prefix, &post_.suffix}) {
      for (int32_t id : *list) {
        if (id < 0 || id >= vocab_size() || !has_token_[static_cast<size_t>(id)]) {
          detail::hf_fail(root.key("post_processor"),
                          "id " + std::to_string(id) + " is not a token of this tokenizer");
        }
      }
    }
    fingerprint_ = detail::sha256_hex("llmprof tokenizer 1\nhf\n" + j.dump());
    if (fs::exists(origin)) path_ = fs::absolute(origin).string();
  }

  std::string name() const override {
    return std::string(config::name(config::TokenizerKind::kHf));
  }
  int64_t vocab_size() const override { return static_cast<int64_t>(tokens_.size()); }

  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids = post_.prefix;
    encode_into(text, ids);
    ids.insert(ids.end(), post_.suffix.begin(), post_.suffix.end());
    return ids;
  }
  std::vector<int32_t> encode_plain(std::string_view text) const override {
    std::vector<int32_t> ids;
    encode_into(text, ids);
    return ids;
  }

  std::string decode(const std::vector<int32_t>& ids) const override {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const int32_t id = ids[i];
      if (id < 0 || id >= vocab_size() || !has_token_[static_cast<size_t>(id)]) {
        throw DataError("hf tokenizer: id " + std::to_string(id) + " at position " +
                        std::to_string(i) + " is not a token (vocabulary size " +
                        std::to_string(vocab_size()) + ")");
      }
      if (special_.count(id) == 0) tokens.push_back(tokens_[static_cast<size_t>(id)]);
    }
    if (decoder_ == nullptr) {  // tokenizers joins with spaces when there is no decoder
      std::string s;
      for (size_t i = 0; i < tokens.size(); ++i) s += (i ? " " : "") + tokens[i];
      return s;
    }
    decoder_->decode(tokens);
    std::string s;
    for (const std::string& t : tokens) s += t;
    return s;
  }

  void save(const std::string& dir) const override {
    nlohmann::json j;
    j["schema_version"] = hf::kHfTokenizerSchemaVersion;
    j["type"] = name();
    j["tokenizer_json"] = path_;
    j["vocab_size"] = vocab_size();
    detail::write_text_atomic(hf::in_folder(dir, hf::kTokenizerJson), j.dump(2) + "\n");
  }
  std::string fingerprint() const override { return fingerprint_; }
  std::vector<std::string> save_files(const std::string& dir) const override {
    detail::write_text_atomic(hf::in_folder(dir, hf::kTokenizerJson), text_);
    return {std::string(hf::kTokenizerJson)};
  }

  int32_t token_to_id(std::string_view token) const override {
    const auto it = added_by_content_.find(std::string(token));
    if (it != added_by_content_.end()) return it->second;
    const auto v = model_->vocab().find(std::string(token));
    return v == model_->vocab().end() ? -1 : v->second;
  }
  const std::vector<int32_t>& prefix_ids() const override { return post_.prefix; }
  const std::vector<int32_t>& suffix_ids() const override { return post_.suffix; }

 private:
  void encode_into(std::string_view text, std::vector<int32_t>& ids) const {
    std::vector<Split> splits{{std::string(text), -1, true}};
    raw_added_.split(splits);
    if (normalizer_) {
      for (Split& s : splits) {
        if (s.added_id < 0) normalizer_->normalize(s.text);
      }
    }
    normalized_added_.split(splits);
    if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(splits);
    for (const Split& s : splits) {
      if (s.added_id >= 0) {
        ids.push_back(s.added_id);
      } else if (!s.text.empty()) {
        model_->tokenize(s.text, ids);
      }
    }
  }

  void build_tokens() {
    int32_t max_id = -1;
    for (const auto& [t, id] : model_->vocab()) max_id = std::max(max_id, id);
    tokens_.assign(static_cast<size_t>(max_id + 1), std::string());
    has_token_.assign(tokens_.size(), false);
    for (const auto& [t, id] : model_->vocab()) {
      tokens_[static_cast<size_t>(id)] = t;
      has_token_[static_cast<size_t>(id)] = true;
    }
  }

  void parse_added(const nlohmann::json& a, const JsonWhere& where) {
    if (!a.is_array()) detail::hf_fail(where, "expected an array");
    added_.reserve(a.size());  // the matchers point into added_
    for (size_t i = 0; i < a.size(); ++i) {
      const JsonWhere at = where.index(i);
      AddedToken t;
      const nlohmann::json& id = detail::hf_need(a[i], "id", at);
      if (!id.is_number_unsigned() || id.get<uint64_t>() > detail::kMaxTokenId) {
        detail::hf_fail(at.key("id"), "expected an integer in [0, 2^24)");
      }
      t.id = static_cast<int32_t>(id.get<uint64_t>());
      t.content = detail::hf_string(a[i], "content", at);
      if (t.content.empty()) detail::hf_fail(at.key("content"), "expected a non-empty string");
      t.special = detail::hf_bool(a[i], "special", at, false);
      t.lstrip = detail::hf_bool(a[i], "lstrip", at, false);
      t.rstrip = detail::hf_bool(a[i], "rstrip", at, false);
      t.normalized = detail::hf_bool(a[i], "normalized", at, !t.special);
      if (detail::hf_bool(a[i], "single_word", at, false)) {
        detail::hf_fail(at.key("single_word"), "single_word true is not implemented by llmprof");
      }
      added_.push_back(t);
    }
    for (const AddedToken& t : added_) {
      if (static_cast<size_t>(t.id) >= tokens_.size()) {
        tokens_.resize(static_cast<size_t>(t.id) + 1);
        has_token_.resize(tokens_.size(), false);
      }
      tokens_[static_cast<size_t>(t.id)] = t.content;
      has_token_[static_cast<size_t>(t.id)] = true;
      added_by_content_[t.content] = t.id;
      if (t.special) special_.insert(t.id);
      if (!t.normalized) {
        raw_added_.add(&t, t.content);
      } else {  // matched in normalized text, so its content is normalized too
        std::string c = t.content;
        if (normalizer_) normalizer_->normalize(c);
        normalized_added_.add(&t, c);
      }
    }
    raw_added_.sort();
    normalized_added_.sort();
  }

  std::string text_;         // the file as read (save_files)
  std::string path_;         // absolute, when read from a file
  std::string fingerprint_;  // sha256 of the canonical JSON
  std::unique_ptr<detail::BpeModel> model_;
  std::unique_ptr<detail::Normalizer> normalizer_;
  std::unique_ptr<detail::PreTokenizer> pre_tokenizer_;
  std::unique_ptr<detail::Decoder> decoder_;
  PostIds post_;
  std::vector<AddedToken> added_;
  AddedMatcher raw_added_, normalized_added_;
  std::unordered_map<std::string, int32_t> added_by_content_;
  std::unordered_set<int32_t> special_;
  std::vector<std::string> tokens_;  // id -> token string (model alphabet)
  std::vector<bool> has_token_;      // ids with no token are holes
};

}  // namespace

std::unique_ptr<HfTokenizer> parse_hf_tokenizer(const std::string& json_text,
                                                const std::string& origin) {
  return std::make_unique<HfBpeTokenizer>(json_text, origin);
}

bool hf_tokenizer_regex_available() { return detail::regex_engine_available(); }

std::unique_ptr<HfTokenizer> load_hf_tokenizer(const std::string& tokenizer_json_path) {
  return parse_hf_tokenizer(read_text_file(tokenizer_json_path), tokenizer_json_path);
}

}  // namespace llmprof::data
