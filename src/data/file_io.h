// File helpers private to the data concern.
#pragma once

#include <string>

namespace llmprof::data::detail {

// Writes text to path.tmp, then renames it over path (a reader never sees half a file).
// Creates the parent directory. Throws IoError naming the path.
void write_text_atomic(const std::string& path, const std::string& text);

}  // namespace llmprof::data::detail
