// bench.json of llmprof bench (rundir::parse_bench_doc); its context block goes through env.json's
// reader.
// Property: it reads, or throws DataError naming the file, readable; no other exception.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/bench_doc.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string file = "bench/bench.json";
  try {
    rundir::parse_bench_doc(std::string(fuzz::as_text(data, size)), file);
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(file) != std::string::npos,
                "a bench.json DataError does not name the file");
  }
  return 0;
}
