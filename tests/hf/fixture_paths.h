// Paths of the safetensors fixtures under tests/hf/fixtures (made by tests/hf/make_fixtures.py).
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace llmprof::test {

// tests/hf/fixtures/<name> in the source tree.
inline std::string hf_fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/hf/fixtures/" + name;
}

// The file names in tests/hf/fixtures, sorted.
inline std::vector<std::string> hf_fixture_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(hf_fixture(""))) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace llmprof::test
