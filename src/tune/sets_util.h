// key=value texts as the tune concern handles them. Private to src/tune.
#pragma once

#include <string>
#include <vector>

namespace llmprof::tune::detail {

// The key of "key=value".
inline std::string key_of(const std::string& set) { return set.substr(0, set.find('=')); }

// The value of "key=value" ("" without '=').
inline std::string value_of(const std::string& set) {
  const size_t eq = set.find('=');
  return eq == std::string::npos ? std::string() : set.substr(eq + 1);
}

// a then b.
inline std::vector<std::string> plus(std::vector<std::string> a,
                                     const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace llmprof::tune::detail
