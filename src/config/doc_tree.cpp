// YAML (yaml-cpp) and JSON (nlohmann SAX) readers into one DocNode tree with 1-based positions.
// nlohmann's DOM keeps no positions, so JSON goes through SAX with an input iterator that records
// how far the lexer has read: at each key event that is one past the key's closing quote.
#include "doc_tree.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llmprof/base/printable.h"
#include "llmprof/error.h"

namespace llmprof::config::detail {
namespace {

// A yaml-cpp mark (0-based, -1 when unknown) as a 1-based Mark.
Mark from_yaml(const YAML::Mark& m) {
  if (m.line < 0 || m.column < 0) return {};
  return {m.line + 1, m.column + 1};
}

// Converts a yaml-cpp node; scalars that were quoted or tagged !!str count as strings.
DocNode from_yaml(const YAML::Node& node) {
  DocNode out;
  out.mark = from_yaml(node.Mark());
  switch (node.Type()) {
    case YAML::NodeType::Map:
      out.kind = DocNode::Kind::kMap;
      for (auto it = node.begin(); it != node.end(); ++it) {
        DocEntry e;
        e.key = it->first.IsScalar() ? it->first.Scalar() : std::string("<non-scalar key>");
        e.key_mark = from_yaml(it->first.Mark());
        e.value = from_yaml(it->second);
        // yaml-cpp marks an empty value at the next token, often on the next line.
        if (e.value.kind == DocNode::Kind::kNull) e.value.mark = e.key_mark;
        out.entries.push_back(std::move(e));
      }
      break;
    case YAML::NodeType::Sequence:
      out.kind = DocNode::Kind::kSeq;
      break;
    case YAML::NodeType::Scalar:
      out.kind = DocNode::Kind::kScalar;
      out.text = node.Scalar();
      out.quoted = node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out.kind = DocNode::Kind::kNull;
      break;
  }
  return out;
}

// An input iterator over the JSON text that publishes how many characters have been consumed.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, const char* begin, size_t* consumed)
      : p_(p), begin_(begin), consumed_(consumed) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    ++p_;
    *consumed_ = static_cast<size_t>(p_ - begin_);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const CountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char* begin_;
  size_t* consumed_;
};

using Json = nlohmann::json;

// Builds the DocNode tree from SAX events; positions come from the CountingIterator's count.
class JsonTreeBuilder : public nlohmann::json_sax<Json> {
 public:
  explicit JsonTreeBuilder(const std::string& text) : text_(text) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  size_t* consumed() { return &consumed_; }
  DocNode& root() { return root_; }
  const std::string& error() const { return error_; }
  Mark error_mark() const { return error_mark_; }

  bool null() override { return add_scalar(DocNode::Kind::kNull, "", false); }
  bool boolean(bool v) override {
    return add_scalar(DocNode::Kind::kScalar, v ? "true" : "false", false);
  }
  bool number_integer(number_integer_t v) override {
    return add_scalar(DocNode::Kind::kScalar, std::to_string(v), false);
  }
  bool number_unsigned(number_unsigned_t v) override {
    return add_scalar(DocNode::Kind::kScalar, std::to_string(v), false);
  }
  bool number_float(number_float_t, const string_t& s) override {
    return add_scalar(DocNode::Kind::kScalar, s, false);
  }
  bool string(string_t& s) override { return add_scalar(DocNode::Kind::kScalar, s, true); }
  bool binary(binary_t&) override { return add_scalar(DocNode::Kind::kScalar, "<binary>", false); }
  bool start_object(std::size_t) override { return open(DocNode::Kind::kMap); }
  bool start_array(std::size_t) override { return open(DocNode::Kind::kSeq); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    // consumed_ is one past the closing quote; the opening quote is the previous unescaped '"'.
    size_t end = consumed_;
    size_t start = end >= 2 ? end - 2 : 0;
    while (start > 0 && !(text_[start] == '"' && !escaped(start))) --start;
    pending_key_ = k;
    pending_key_mark_ = mark_at(start);
    size_t v = end;
    while (v < text_.size() &&
           (std::isspace(static_cast<unsigned char>(text_[v])) || text_[v] == ':')) {
      ++v;
    }
    pending_value_mark_ = mark_at(v);
    return true;
  }

  bool parse_error(std::size_t position,
                   const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error_mark_ = mark_at(position > 0 ? position - 1 : 0);
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ...":
    // the position is ours already, keep the reason.
    std::string what = ex.what();
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos) {
      what = what.substr(what.find("] ") + 2);
    }
    auto col = what.rfind("parse error", 0) == 0 ? what.find("column ") : std::string::npos;
    auto colon = col == std::string::npos ? std::string::npos : what.find(": ", col);
    error_ = colon == std::string::npos ? what : what.substr(colon + 2);
    return false;
  }

 private:
  // The 1-based line and column of a byte offset.
  Mark mark_at(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    size_t line = static_cast<size_t>(it - line_starts_.begin());  // >= 1: line_starts_[0] == 0
    return {static_cast<int64_t>(line), static_cast<int64_t>(offset - line_starts_[line - 1] + 1)};
  }

  // True when the quote at i is preceded by an odd number of backslashes.
  bool escaped(size_t i) const {
    size_t n = 0;
    while (i > n && text_[i - n - 1] == '\\') ++n;
    return n % 2 == 1;
  }

  // Attaches node to the innermost open container (or makes it the root); returns it.
  DocNode* attach(DocNode node) {
    if (stack_.empty()) {
      node.mark = {1, 1};
      root_ = std::move(node);
      return &root_;
    }
    DocNode* parent = stack_.back();
    DocEntry e;
    if (parent->kind == DocNode::Kind::kMap) {
      e.key = pending_key_;
      e.key_mark = pending_key_mark_;
      node.mark = pending_value_mark_;
    }
    e.value = std::move(node);
    parent->entries.push_back(std::move(e));
    return &parent->entries.back().value;
  }

  bool add_scalar(DocNode::Kind kind, const std::string& text, bool quoted) {
    DocNode n;
    n.kind = kind;
    n.text = text;
    n.quoted = quoted;
    attach(std::move(n));
    return true;
  }

  bool open(DocNode::Kind kind) {
    DocNode n;
    n.kind = kind;
    stack_.push_back(attach(std::move(n)));
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  const std::string& text_;
  std::vector<size_t> line_starts_;  // byte offset where each line begins
  size_t consumed_ = 0;
  DocNode root_;
  std::vector<DocNode*> stack_;  // open containers; each is the last entry of the one below
  std::string pending_key_;
  Mark pending_key_mark_;
  Mark pending_value_mark_;
  std::string error_;
  Mark error_mark_;
};

}  // namespace

DocNode parse_yaml(const std::string& text, const std::string& file) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Mark m = from_yaml(e.mark);
    throw ConfigError(
        fmt::format("malformed YAML in {} line {}, col {}: {}", file, m.line, m.column,
                    printable(e.msg, 200)),
        file, "", m.line, m.column);
  }
  return from_yaml(node);
}

DocNode parse_json(const std::string& text, const std::string& file) {
  JsonTreeBuilder builder(text);
  CountingIterator first(text.data(), text.data(), builder.consumed());
  CountingIterator last(text.data() + text.size(), text.data(), builder.consumed());
  if (!Json::sax_parse(first, last, &builder)) {
    Mark m = builder.error_mark();
    throw ConfigError(fmt::format("malformed JSON in {} line {}, col {}: {}", file, m.line,
                                  m.column, printable(builder.error(), 200)),
                      file, "", m.line, m.column);
  }
  return std::move(builder.root());
}

DocNode parse_override_value(const std::string& text) {
  auto b = text.find_first_not_of(" \t");
  auto e = text.find_last_not_of(" \t");
  std::string raw = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  DocNode out;
  if (raw.empty() || raw == "~" || raw == "null" || raw == "Null" || raw == "NULL") return out;
  out.kind = DocNode::Kind::kScalar;
  out.text = raw;
  // Plain text is taken verbatim (no YAML comments or folding on a command line); only a quoted
  // value goes through yaml-cpp, to unquote it and mark it a string.
  if (raw.front() == '"' || raw.front() == '\'') {
    try {
      YAML::Node node = YAML::Load(raw);
      if (node.IsScalar()) {
        out.text = node.Scalar();
        out.quoted = true;
      }
    } catch (const YAML::Exception&) {
      // not a well-formed quoted scalar: keep the raw text
    }
  }
  return out;
}

}  // namespace llmprof::config::detail
