// Text sources: reading a corpus file and the built-in generated quick-start corpus.
#pragma once

#include <cstdint>
#include <string>

namespace llmprof::data {

// Reads a whole text file. Throws DataError naming the path when missing, unreadable or empty.
std::string read_text_file(const std::string& path);

// A deterministic (given seed) English-like play script of n_chars characters: speaker lines,
// a word vocabulary with Zipf-like frequencies, punctuation and line breaks, so a char-level GPT
// learns something real on it with no download.
std::string generate_corpus(uint64_t seed, int64_t n_chars);

}  // namespace llmprof::data
