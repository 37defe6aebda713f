// Checks shared by the tests of the HTML report (tests/report, and tests/plot through the CLI).
#pragma once

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace llmprof::test {

// How many times part occurs in text (overlaps counted).
inline size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

inline void expect_in_page(const std::string& page, const std::string& part) {
  EXPECT_NE(page.find(part), std::string::npos) << "'" << part << "' not in the page";
}

// Every src=, href=, url() or @import of the page that could fetch something from outside it.
inline std::vector<std::string> external_references(const std::string& page) {
  static const std::regex kPattern(
      R"re(((src|href)\s*=\s*["']?\s*(https?:|//|ftp:|file:))|(url\(\s*["']?\s*(https?:|//))|@import)re",
      std::regex::icase);
  std::vector<std::string> found;
  for (std::sregex_iterator it(page.begin(), page.end(), kPattern), end; it != end; ++it)
    found.push_back(it->str());
  return found;
}

}  // namespace llmprof::test
