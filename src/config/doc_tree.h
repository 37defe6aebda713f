// A parsed config document, the same shape for YAML and JSON: mappings, scalars (with whether the
// scalar was quoted) and the 1-based line/column of each key and value, so every error can point
// at the text. Private to src/config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmprof::config::detail {

// A position in the config text; 1-based, 0 when unknown.
struct Mark {
  int64_t line = 0;
  int64_t column = 0;
};

struct DocEntry;

// One node of the document. No config key takes a list, so sequence items are not kept.
struct DocNode {
  enum class Kind { kNull, kScalar, kMap, kSeq };
  Kind kind = Kind::kNull;
  std::string text;               // kScalar: the scalar as written, unquoted
  bool quoted = false;            // kScalar: a quoted/explicit string ("4" is a string, 4 is not)
  Mark mark;                      // where the value starts
  std::vector<DocEntry> entries;  // kMap: in document order, duplicates kept
};

struct DocEntry {
  std::string key;
  Mark key_mark;
  DocNode value;
};

// Where a value came from: a file position, or a --set argument (file empty).
struct Origin {
  std::string file;
  Mark mark;
  std::string set_arg;  // the whole `key=value` text of a --set override
};

// "(FILE line 3, col 12)", "(from --set k=v)" or "" when nothing is known.
std::string describe(const Origin& origin);

// The kind of a node in words for messages: "a mapping", "a sequence", "an empty value", "'abc'".
std::string describe_node(const DocNode& node);

// Parses YAML text into a document; malformed input throws ConfigError naming file, line, column.
DocNode parse_yaml(const std::string& text, const std::string& file);

// Parses JSON text into a document; malformed input throws ConfigError naming file, line, column.
DocNode parse_json(const std::string& text, const std::string& file);

// Parses the value half of `--set key=value` as one YAML scalar ("1e-3", "true", "abc").
// Text that is not valid YAML or not a scalar comes back as a plain scalar of the raw text.
DocNode parse_override_value(const std::string& text);

}  // namespace llmprof::config::detail
