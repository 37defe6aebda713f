// eval.json of llmprof eval (rundir::parse_eval_doc).
// Property: it reads, or throws DataError naming the file, readable; no other exception. What reads
// is written back (eval_doc_text) as a text that reads again and is written back unchanged.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/eval_doc.h"

using namespace llmprof;

namespace {

// The written text of a read document reads back, and writes back the same text.
void check_rewrite(const std::string& text) {
  std::string again;
  try {
    again = rundir::eval_doc_text(rundir::parse_eval_doc(text, "rewritten"));
  } catch (const DataError& e) {
    fuzz::fail(std::string("the written text does not read back: ") + e.what() + "\n" + text);
  }
  fuzz::check(again == text, "the written text, read and written again, changes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string file = "eval/eval.json";
  rundir::EvalDoc doc;
  try {
    doc = rundir::parse_eval_doc(std::string(fuzz::as_text(data, size)), file);
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(file) != std::string::npos,
                "an eval.json DataError does not name the file");
    return 0;
  }
  check_rewrite(rundir::eval_doc_text(doc));
  return 0;
}
