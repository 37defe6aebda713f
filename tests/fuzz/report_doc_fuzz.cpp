// The report's JSON (rundir::parse_report_doc, users' tools) and tried.json (rundir::
// parse_tried_doc, read back by every report of a run), each given the same input.
// Property, per reader: it reads, or throws DataError naming the file, readable; no other
// exception. What reads is written back as a text that reads again and is written back unchanged.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/report_doc.h"
#include "llmprof/rundir/tried_doc.h"

using namespace llmprof;

namespace {

// parse(text, file) -> Doc, write(Doc) -> text.
template <typename Parse, typename Write>
void check_reader(const std::string& input, const std::string& file, Parse parse, Write write) {
  std::string written;
  try {
    written = write(parse(input, file));
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(file) != std::string::npos,
                "a DataError does not name the file");
    return;
  }
  std::string again;
  try {
    again = write(parse(written, "rewritten"));
  } catch (const DataError& e) {
    fuzz::fail(std::string("the written text does not read back: ") + e.what() + "\n" + written);
  }
  fuzz::check(again == written, "the written text, read and written again, changes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(fuzz::as_text(data, size));
  check_reader(input, "report.json", rundir::parse_report_doc,
               [](const rundir::ReportDoc& d) { return rundir::report_doc_text(d); });
  check_reader(input, "run/tried.json", rundir::parse_tried_doc,
               [](const rundir::TriedDoc& d) { return rundir::tried_doc_text(d); });
  return 0;
}
