// The schema as data (list_keys), single values (get_value) and the whole resolved config as
// commented YAML (to_yaml) that load_config reads back into an identical Config.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "key_spec.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"

namespace llmprof::config {
namespace {

using detail::KeySpec;

// Comments line up at this column at most; longer lines get theirs two spaces after.
constexpr size_t kMaxCommentColumn = 44;

// The spec of path, or a ConfigError naming the nearest known key.
const KeySpec& spec_or_throw(const std::string& path) {
  if (const KeySpec* spec = detail::find_key(path)) return *spec;
  std::vector<std::string> paths;
  for (const KeySpec& s : detail::key_table()) paths.push_back(s.path);
  std::string hint = detail::did_you_mean(path, paths);
  throw ConfigError("unknown key '" + path + "'" +
                        (hint.empty() ? "; `llmprof config keys` lists the known keys" : hint),
                    "", path);
}

// The part of a path after its group ("n_layer" of "model.n_layer", "threads" of "threads").
std::string leaf_of(const std::string& path) {
  auto dot = path.find('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace

std::vector<KeyInfo> list_keys() {
  const Config defaults;
  std::vector<KeyInfo> out;
  for (const KeySpec& s : detail::key_table()) {
    out.push_back({s.path, detail::type_name(s.type), detail::format_value(s, defaults),
                   detail::range_text(s), s.doc});
  }
  return out;
}

std::string get_value(const Config& cfg, const std::string& path) {
  return detail::format_value(spec_or_throw(path), cfg);
}

std::string to_yaml(const Config& cfg) {
  std::string out =
      "# llmprof config: every key, in schema order. `llmprof config keys` lists types and "
      "ranges.\n";
  if (!cfg.source_file.empty()) out += "# resolved from " + cfg.source_file + "\n";
  const auto& table = detail::key_table();
  // Keys of one group are contiguous in the table; print each group as a block.
  for (size_t begin = 0; begin < table.size();) {
    std::string group = detail::group_of(table[begin].path);
    size_t end = begin;
    while (end < table.size() && detail::group_of(table[end].path) == group) ++end;
    std::string indent = group.empty() ? "" : "  ";
    std::vector<std::string> lines;
    size_t width = 0;
    for (size_t i = begin; i < end; ++i) {
      lines.push_back(indent + leaf_of(table[i].path) + ": " + detail::format_value(table[i], cfg));
      width = std::max(width, lines.back().size());
    }
    width = std::min(width, kMaxCommentColumn);
    out += "\n";
    if (!group.empty()) out += group + ":\n";
    for (size_t i = begin; i < end; ++i) {
      const std::string& line = lines[i - begin];
      out += fmt::format("{:<{}}  # {}\n", line, std::max(width, line.size()), table[i].doc);
    }
    begin = end;
  }
  return out;
}

}  // namespace llmprof::config
