// The key schema table behind config/schema.h: one KeySpec per config key with its type, range,
// doc and a reference into the Config struct. Private to src/config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "doc_tree.h"
#include "llmprof/config/config.h"

namespace llmprof::config::detail {

enum class KeyType { kInt, kFloat, kBool, kString, kEnum };

// Accessors into a Config, one per key (plain function pointers, see key_table.cpp).
using IntRef = int64_t& (*)(Config&);
using FloatRef = double& (*)(Config&);
using BoolRef = bool& (*)(Config&);
using StringRef = std::string& (*)(Config&);
// An enum key's value as its index in the key's name table (see enum_key in key_table.cpp).
using EnumGet = int (*)(const Config&);
using EnumSet = void (*)(Config&, int);

// Largest int64: an int range with this upper bound is open-ended ("[0, inf)").
inline constexpr int64_t kNoIntMax = INT64_MAX;

struct KeySpec {
  std::string path;  // "model.n_layer", or "threads" at top level
  KeyType type = KeyType::kInt;
  std::string doc;  // one line, shown in `llmprof config keys` and to_yaml comments

  int64_t int_min = 0;  // kInt: inclusive bounds; int_max == kNoIntMax means unbounded
  int64_t int_max = kNoIntMax;
  double float_min = 0;  // kFloat: bounds, +inf for unbounded
  double float_max = 0;
  bool min_open = false;  // kFloat: (min, ... rather than [min, ...
  bool max_open = false;
  std::vector<std::string> choices;  // kEnum: the enum's name table, indexed by value

  IntRef int_ref = nullptr;  // exactly one accessor is set, by type (kEnum: the get/set pair)
  FloatRef float_ref = nullptr;
  BoolRef bool_ref = nullptr;
  StringRef string_ref = nullptr;
  EnumGet enum_get = nullptr;
  EnumSet enum_set = nullptr;
};

// All keys in schema order (struct order of config.h).
const std::vector<KeySpec>& key_table();

// The spec of a dotted path, or nullptr.
const KeySpec* find_key(const std::string& path);

// True when name is a group ("model", "data", ...) rather than a key.
bool is_group(const std::string& name);

// The group of a path ("model" for "model.n_layer", "" for "threads").
std::string group_of(const std::string& path);

// "int", "float", "bool", "string" or "enum".
std::string type_name(KeyType type);

// The range as KeyInfo prints it: "[1, 256]", "(0, 1)", "[0, inf)", "sgd|adam|adamw", "".
std::string range_text(const KeySpec& spec);

// The key's current value as YAML prints it ("128", "0.001", "adamw", "\"\"").
std::string format_value(const KeySpec& spec, const Config& cfg);

// Types, range-checks and stores a document value into cfg; throws ConfigError naming origin.
void assign_value(const KeySpec& spec, Config& cfg, const DocNode& value, const Origin& origin);

// Why the key's current value is out of its range or choices, or nullopt when it is fine.
std::optional<std::string> range_problem(const KeySpec& spec, const Config& cfg);

// "'text' is not one of a|b|c", with "; did you mean 'x'?" for a close name of 4+ characters.
std::string unknown_name(const std::string& text, const std::vector<std::string>& names);

// A string as a YAML scalar: bare when that reads back as the same string, else double-quoted.
std::string yaml_string(const std::string& s);

// "; did you mean 'x'?" naming the nearest candidate by edit distance (whole path, leaf or leaf
// prefix), or every group holding the same leaf ("'a' or 'b'"); "" when nothing is close.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace llmprof::config::detail
