// eval.json of llmprof eval (rundir::parse_eval_doc).
// Property: it reads, or throws DataError naming the file, readable; no other exception.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/eval_doc.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string file = "eval/eval.json";
  try {
    rundir::parse_eval_doc(std::string(fuzz::as_text(data, size)), file);
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(file) != std::string::npos,
                "a eval.json DataError does not name the file");
  }
  return 0;
}
