// Paths of the hand-written run and sweep fixtures under tests/report/fixtures (see README there).
#pragma once

#include <string>

namespace llmprof::test {

// tests/report/fixtures/<name> in the source tree.
inline std::string report_fixture(const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/report/fixtures/" + name;
}

}  // namespace llmprof::test
