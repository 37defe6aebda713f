// summary.json of a run directory (rundir::read_summary). Property: it reads, or throws DataError
// naming the file; no other exception.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/read.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("run/summary.json", fuzz::as_text(data, size));
  std::vector<rundir::InputWarning> warnings;
  try {
    rundir::read_summary(path, warnings);
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(path) != std::string::npos,
                "a summary.json DataError does not name the file");
  }
  return 0;
}
