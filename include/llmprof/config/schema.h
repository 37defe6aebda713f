// The config key schema and loading: every key has a type, default, range and one-line doc.
// Files (YAML or JSON, one schema) are applied first, then --set overrides, then cross-key checks.
// All errors are ConfigError naming the file, line/column, key path and bad value.
#pragma once

#include <string>
#include <vector>

#include "llmprof/config/config.h"

namespace llmprof::config {

// One row of `llmprof config keys`.
struct KeyInfo {
  std::string path;           // dotted key, e.g. "model.n_layer"
  std::string type;           // int | float | bool | string | enum
  std::string default_value;  // as it prints in YAML
  std::string range;          // e.g. "[1, 1024]", "adamw|adam|sgd", "" when free
  std::string doc;            // one line
};

// All keys, in schema order.
std::vector<KeyInfo> list_keys();

// Reads a YAML or JSON config file, applies the `key=value` overrides, validates. Throws ConfigError.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Applies one `key=value` override (typed and range-checked like the file). Throws ConfigError.
void apply_override(Config& cfg, const std::string& assignment);

// Cross-key checks (n_head divides n_embd, ...). Throws ConfigError naming the keys.
void validate(const Config& cfg);

// The resolved config as YAML, every key present, in schema order (what config.yaml holds).
std::string to_yaml(const Config& cfg);

// The value of one key as it prints in YAML ("128", "adamw", "0.001"). Throws ConfigError if unknown.
std::string get_value(const Config& cfg, const std::string& path);

// The items of a comma-separated list key (data.jsonl_fields, bench.variants, ...), trimmed;
// empty items dropped.
std::vector<std::string> split_list(const std::string& value);

// bench.batch_sizes as integers. Throws ConfigError naming the key and the bad item.
std::vector<int64_t> bench_batch_sizes(const Config& cfg);

// "; did you mean 'x'?" naming the candidate nearest to a name not among them (by edit distance,
// as unknown keys are answered), "" when none is close.
std::string nearest_name_hint(const std::string& name, const std::vector<std::string>& candidates);

// bench.variants as enums, in the order listed. Throws ConfigError naming the key and the bad item.
std::vector<BenchVariant> bench_variants(const Config& cfg);

}  // namespace llmprof::config
