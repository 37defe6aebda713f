// read_file_maybe_gzip: a whole file into memory, through zlib's gzread when its name ends in .gz.
// gzread handles multi-member files (gzip -9 -n output and concatenations alike) and reports a
// stream cut short as Z_BUF_ERROR, which we turn into an error rather than a silently short file.
#include <zlib.h>

#include <filesystem>
#include <string>

#include "llmprof/data/corpus.h"
#include "llmprof/data/text_dataset.h"
#include "llmprof/error.h"

namespace fs = std::filesystem;

namespace llmprof::data {

namespace {

constexpr unsigned kGzipChunkBytes = 1u << 20;   // one gzread call
constexpr unsigned kGzipBufferBytes = 1u << 17;  // zlib's input buffer (default 8 KiB)

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Closes the gzFile on every path out of read_gzip.
struct GzCloser {
  gzFile f;
  ~GzCloser() { gzclose_r(f); }
};

std::string read_gzip(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw DataError("data: file not found: " + path);
  if (fs::is_directory(st)) throw DataError("data: expected a .gz file, got a directory: " + path);
  if (fs::file_size(path, ec) == 0 && !ec) throw DataError("data: file is empty: " + path);
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw DataError("data: cannot open for reading (permissions?): " + path);
  GzCloser closer{f};
  gzbuffer(f, kGzipBufferBytes);
  std::string text;
  while (true) {
    const size_t old = text.size();
    text.resize(old + kGzipChunkBytes);
    const int n = gzread(f, text.data() + old, kGzipChunkBytes);
    if (n < 0) {
      int err = 0;
      const char* msg = gzerror(f, &err);
      throw DataError("data: gunzip failed after " + std::to_string(old) + " bytes (" + msg +
                      "): " + path);
    }
    text.resize(old + static_cast<size_t>(n));
    if (n == 0) break;
  }
  int err = 0;
  const char* msg = gzerror(f, &err);
  if (err == Z_BUF_ERROR) {
    throw DataError("data: gzip stream ends early (" + std::string(msg) + ") after " +
                    std::to_string(text.size()) + " bytes; truncated download?: " + path);
  }
  if (err != Z_OK) throw DataError("data: gunzip failed (" + std::string(msg) + "): " + path);
  if (gzdirect(f)) throw DataError("data: not gzip data although the name ends in .gz: " + path);
  if (text.empty()) throw DataError("data: file is empty after gunzip: " + path);
  return text;
}

}  // namespace

std::string read_file_maybe_gzip(const std::string& path) {
  return ends_with(path, ".gz") ? read_gzip(path) : read_text_file(path);
}

}  // namespace llmprof::data
