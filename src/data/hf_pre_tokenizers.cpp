// tokenizer.json's pre-tokenizers: Split (a pattern and a delimiter behaviour), ByteLevel, Digits,
// Metaspace and Sequence, as the tokenizers library splits text before the model sees it.
#include <nlohmann/json.hpp>

#include "hf_tokenizer_parts.h"
#include "llmprof/base/printable.h"

namespace llmprof::data::detail {

namespace {

// What happens to a match of the pattern (tokenizers' SplitDelimiterBehavior).
enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct Range {
  size_t begin, end;
  bool is_match;
};

// The text as alternating non-match / match ranges (matches possibly inverted).
std::vector<Range> ranges_of(const Regex& pattern, std::string_view text, bool invert) {
  std::vector<Range> r;
  size_t prev = 0;
  for (const auto& [b, e] : pattern.find_all(text)) {
    if (b > prev) r.push_back({prev, b, invert});
    r.push_back({b, e, !invert});
    prev = e;
  }
  if (prev < text.size()) r.push_back({prev, text.size(), invert});
  return r;
}

// The pieces a behaviour keeps, as [begin, end) ranges (empty ones dropped).
std::vector<Range> apply_behavior(std::vector<Range> r, Behavior behavior) {
  std::vector<Range> out;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::kIsolated:
      out = std::move(r);
      break;
    case Behavior::kRemoved:
      for (const Range& x : r) {
        if (!x.is_match) out.push_back(x);
      }
      break;
    case Behavior::kContiguous:  // consecutive matches become one piece
      for (const Range& x : r) {
        if (!out.empty() && x.is_match && previous_match) {
          out.back().end = x.end;
        } else {
          out.push_back(x);
        }
        previous_match = x.is_match;
      }
      break;
    case Behavior::kMergedWithPrevious:  // a match joins the piece before it
      for (const Range& x : r) {
        if (x.is_match && !previous_match && !out.empty()) {
          out.back().end = x.end;
        } else {
          out.push_back(x);
        }
        previous_match = x.is_match;
      }
      break;
    case Behavior::kMergedWithNext:  // a match joins the piece after it
      for (auto it = r.rbegin(); it != r.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty()) {
          out.back().begin = it->begin;
        } else {
          out.push_back(*it);
        }
        previous_match = it->is_match;
      }
      std::reverse(out.begin(), out.end());
      break;
  }
  return out;
}

// Replaces each text Split by the pieces split_one gives for it.
template <typename F>
void split_each(std::vector<Split>& splits, F split_one) {
  std::vector<Split> out;
  out.reserve(splits.size());
  for (Split& s : splits) {
    if (s.added_id >= 0) {
      out.push_back(std::move(s));
      continue;
    }
    split_one(s, out);
  }
  splits = std::move(out);
}

// Appends the ranges of s as Splits.
void push_ranges(const Split& s, const std::vector<Range>& ranges, std::vector<Split>& out) {
  for (const Range& x : ranges) {
    if (x.end <= x.begin) continue;
    out.push_back({s.text.substr(x.begin, x.end - x.begin), -1, s.at_start && x.begin == 0});
  }
}

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(std::unique_ptr<Regex> pattern, Behavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [&](const Split& s, std::vector<Split>& out) {
      push_ranges(s, apply_behavior(ranges_of(*pattern_, s.text, invert_), behavior_), out);
    });
  }

 private:
  std::unique_ptr<Regex> pattern_;
  Behavior behavior_;
  bool invert_;
};

// GPT-2's pattern, as tokenizers' ByteLevel pre-tokenizer uses when use_regex is true.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// ByteLevel: optionally a space before each split, optionally GPT-2's split, then each byte as its
// printable stand-in character.
class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex, const JsonWhere& where)
      : add_prefix_space_(add_prefix_space) {
    if (use_regex) regex_ = std::make_unique<Regex>(kGpt2Pattern, false, where);
  }
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [&](Split& s, std::vector<Split>& out) {
      if (add_prefix_space_ && !s.text.empty() && s.text[0] != ' ') s.text.insert(0, " ");
      const size_t first = out.size();
      if (regex_) {
        push_ranges(s, apply_behavior(ranges_of(*regex_, s.text, false), Behavior::kIsolated), out);
      } else if (!s.text.empty()) {
        out.push_back(s);
      }
      for (size_t k = first; k < out.size(); ++k) {
        std::string mapped;
        mapped.reserve(out[k].text.size() * 2);
        for (char c : out[k].text) mapped += byte_level_char(static_cast<unsigned char>(c));
        out[k].text = std::move(mapped);
      }
    });
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> regex_;
};

// Metaspace: spaces become the replacement character (U+2581), which is prepended per the scheme
// and, with split, starts each piece.
class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  enum class Prepend { kAlways, kFirst, kNever };
  MetaspacePreTokenizer(std::string replacement,
                        Prepend prepend,
                        bool split,
                        const JsonWhere& where)
      : replacement_(std::move(replacement)),
        space_(std::make_unique<Regex>(" ", true, where)),
        marker_(std::make_unique<Regex>(replacement_, true, where)),
        prepend_(prepend),
        split_(split) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [&](Split& s, std::vector<Split>& out) {
      s.text = space_->replace_all(s.text, replacement_);
      const bool starts = s.text.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts && !s.text.empty() &&
          (prepend_ == Prepend::kAlways || (prepend_ == Prepend::kFirst && s.at_start))) {
        s.text.insert(0, replacement_);
      }
      if (!split_) {
        if (!s.text.empty()) out.push_back(s);
        return;
      }
      push_ranges(s, apply_behavior(ranges_of(*marker_, s.text, false), Behavior::kMergedWithNext),
                  out);
    });
  }

 private:
  std::string replacement_;
  std::unique_ptr<Regex> space_, marker_;
  Prepend prepend_;
  bool split_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> parts)
      : parts_(std::move(parts)) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    for (const auto& p : parts_) p->pre_tokenize(splits);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

Behavior parse_behavior(const nlohmann::json& j, const JsonWhere& where) {
  const std::string b = hf_string(j, "behavior", where);
  if (b == "Removed") return Behavior::kRemoved;
  if (b == "Isolated") return Behavior::kIsolated;
  if (b == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::kMergedWithNext;
  if (b == "Contiguous") return Behavior::kContiguous;
  hf_fail(where.key("behavior"), "'" + printable(b, 40) +
                                     "' is not Removed, Isolated, MergedWithPrevious, "
                                     "MergedWithNext or Contiguous");
}

MetaspacePreTokenizer::Prepend parse_prepend(const nlohmann::json& j, const JsonWhere& where) {
  using P = MetaspacePreTokenizer::Prepend;
  const std::string scheme = hf_string(j, "prepend_scheme", where);
  if (scheme.empty()) return hf_bool(j, "add_prefix_space", where, true) ? P::kAlways : P::kNever;
  if (scheme == "always") return P::kAlways;
  if (scheme == "first") return P::kFirst;
  if (scheme == "never") return P::kNever;
  hf_fail(where.key("prepend_scheme"),
          "'" + printable(scheme, 40) + "' is not first, always or never");
}

}  // namespace

std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const nlohmann::json& j, const JsonWhere& where) {
  if (j.is_null()) return nullptr;
  const std::string type = hf_type(j, where);
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(
        parse_pattern(hf_need(j, "pattern", where), where.key("pattern")), parse_behavior(j, where),
        hf_bool(j, "invert", where, false));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPreTokenizer>(hf_bool(j, "add_prefix_space", where, true),
                                                   hf_bool(j, "use_regex", where, true), where);
  }
  if (type == "Digits") {  // char::is_numeric is \p{N}
    const bool single = hf_bool(j, "individual_digits", where, false);
    return std::make_unique<SplitPreTokenizer>(
        std::make_unique<Regex>(single ? R"(\p{N})" : R"(\p{N}+)", false, where),
        Behavior::kIsolated, false);
  }
  if (type == "Metaspace") {
    return std::make_unique<MetaspacePreTokenizer>(
        hf_string(j, "replacement", where, "\xE2\x96\x81"), parse_prepend(j, where),
        hf_bool(j, "split", where, true), where);
  }
  if (type == "Sequence") {
    const nlohmann::json& a = hf_need(j, "pretokenizers", where);
    if (!a.is_array()) hf_fail(where.key("pretokenizers"), "expected an array");
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (size_t i = 0; i < a.size(); ++i) {
      auto p = parse_pre_tokenizer(a[i], where.key("pretokenizers").index(i));
      if (p) parts.push_back(std::move(p));
    }
    return std::make_unique<SequencePreTokenizer>(std::move(parts));
  }
  hf_fail(where.key("type"), "pre-tokenizer '" + printable(type, 40) +
                                 "' is not implemented by llmprof (it has Split, ByteLevel, "
                                 "Digits, Metaspace, Sequence)");
}

}  // namespace llmprof::data::detail
