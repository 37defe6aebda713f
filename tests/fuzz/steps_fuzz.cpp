// steps.csv of a run directory, read through rundir::load_run (what report and plot call).
// Property: the run loads, or DataError names steps.csv; no other exception.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/read.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("run/steps.csv", fuzz::as_text(data, size));
  try {
    rundir::load_run(fuzz::scratch_dir() + "/run");
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find("steps.csv") != std::string::npos,
                "a steps.csv DataError does not name the file");
  }
  return 0;
}
