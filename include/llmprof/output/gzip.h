// gzip compression of whole files in memory (trace.json.gz), through zlib.
#pragma once

#include <string>
#include <string_view>

namespace llmprof::output {

// A gzip stream (RFC 1952: what gzip, Python's gzip and HTA read) holding text. Throws Error
// when zlib fails (it only does out of memory).
std::string gzip_compress(std::string_view text, int level = 6);

}  // namespace llmprof::output
