// bench.json of llmprof bench (rundir::parse_bench_doc); its context block goes through env.json's
// reader.
// Property: it reads, or throws DataError naming the file, readable; no other exception. What reads
// is written back (bench_doc_text) as a text that reads again and is written back unchanged.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/bench_doc.h"

using namespace llmprof;

namespace {

// The written text of a read document reads back, and writes back the same text.
void check_rewrite(const std::string& text) {
  std::string again;
  try {
    again = rundir::bench_doc_text(rundir::parse_bench_doc(text, "rewritten"));
  } catch (const DataError& e) {
    fuzz::fail(std::string("the written text does not read back: ") + e.what() + "\n" + text);
  }
  fuzz::check(again == text, "the written text, read and written again, changes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string file = "bench/bench.json";
  rundir::BenchDoc doc;
  try {
    doc = rundir::parse_bench_doc(std::string(fuzz::as_text(data, size)), file);
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(file) != std::string::npos,
                "a bench.json DataError does not name the file");
    return 0;
  }
  check_rewrite(rundir::bench_doc_text(doc));
  return 0;
}
