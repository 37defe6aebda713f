// env.json of a run directory (rundir::parse_env), also the context block of bench.json.
// Property: it reads, or throws DataError naming the file, readable; no other exception.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/env.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string file = "env/env.json";
  try {
    rundir::parse_env(std::string(fuzz::as_text(data, size)), file);
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(file) != std::string::npos,
                "a env.json DataError does not name the file");
  }
  return 0;
}
