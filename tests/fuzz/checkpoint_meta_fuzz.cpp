// checkpoint.json of an llmprof checkpoint (rundir::read_checkpoint_meta), read before any weight.
// Property: it reads, or throws DataError naming the file, readable; no other exception.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/checkpoint_meta.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("checkpoint/checkpoint.json", fuzz::as_text(data, size));
  try {
    rundir::read_checkpoint_meta(path);
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(path) != std::string::npos,
                "a checkpoint.json DataError does not name the file");
  }
  return 0;
}
