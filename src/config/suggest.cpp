// "Did you mean" for unknown keys and enum values: the nearest candidate by edit distance,
// compared both as whole dotted paths (model.n_layr -> model.n_layer) and by leaf name alone
// (train.lr -> optim.lr), offered only when the distance is small for the length typed.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "key_spec.h"
#include "llmprof/config/schema.h"

namespace llmprof::config::detail {
namespace {

// Optimal-string-alignment distance: insert, delete, substitute and swap of two neighbours
// each cost 1, so the common typo "modle" is one edit from "model".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The part after the last dot ("n_layer" of "model.n_layer").
std::string leaf_of(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// The largest distance still worth suggesting for a name of n characters: a third, 1 to 3.
size_t max_distance(size_t n) { return std::clamp<size_t>(n / 3, 1, 3); }

// True when typed is a prefix of a longer leaf, as when a unit suffix is left off
// (malloc_mmap_threshold for malloc_mmap_threshold_bytes); short prefixes are too vague.
bool is_prefix(const std::string& typed, const std::string& leaf) {
  return typed.size() >= 3 && leaf.size() > typed.size() &&
         leaf.compare(0, typed.size(), typed) == 0;
}

}  // namespace

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string leaf = leaf_of(name);
  std::string best;
  size_t best_score = SIZE_MAX, best_full = SIZE_MAX, best_len_gap = SIZE_MAX;
  std::vector<std::string> same_leaf;  // the leaf exists, in other groups
  for (const std::string& c : candidates) {
    size_t full = edit_distance(name, c);
    size_t part = edit_distance(leaf, leaf_of(c));
    if (full == 0) continue;
    if (part == 0) same_leaf.push_back(c);
    if (is_prefix(leaf, leaf_of(c))) part = std::min<size_t>(part, 1);
    bool close = full <= max_distance(name.size()) || part <= max_distance(leaf.size());
    if (!close) continue;
    size_t score = std::min(full, part);
    size_t len_gap = c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    // Ties go to the closer whole path, then the nearer length (adamx -> adamw, not adam), then
    // to schema order.
    if (std::tie(score, full, len_gap) < std::tie(best_score, best_full, best_len_gap)) {
      best = c;
      best_score = score;
      best_full = full;
      best_len_gap = len_gap;
    }
  }
  if (same_leaf.size() > 1)
    return fmt::format("; did you mean '{}'?", fmt::join(same_leaf, "' or '"));
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

}  // namespace llmprof::config::detail

namespace llmprof::config {

std::string nearest_name_hint(const std::string& name, const std::vector<std::string>& candidates) {
  return detail::did_you_mean(name, candidates);
}

}  // namespace llmprof::config
