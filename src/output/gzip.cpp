#include "llmprof/output/gzip.h"

#include <fmt/format.h>
#include <zlib.h>

#include "llmprof/error.h"

namespace llmprof::output {

std::string gzip_compress(std::string_view text, int level) {
  if (text.size() > 0xffffffffu) throw Error("gzip: a file over 4 GiB is not compressed in one piece");
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error("gzip: zlib could not start a stream (out of memory)");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);  // the bound fits the whole stream in one call
  const size_t written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error(fmt::format("gzip: zlib failed to compress ({})", rc));
  out.resize(written);
  return out;
}

}  // namespace llmprof::output
