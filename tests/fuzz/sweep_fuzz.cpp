// sweep.csv of a sweep directory, read through rundir::load_sweep (report, plot and the sweep's
// resume). Property: the sweep loads, or DataError names sweep.csv; no other exception.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/read.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::write_scratch("sweep/sweep.csv", fuzz::as_text(data, size));
  try {
    rundir::load_sweep(fuzz::scratch_dir() + "/sweep");
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find("sweep.csv") != std::string::npos,
                "a sweep.csv DataError does not name the file");
  }
  return 0;
}
