// The sweep directory's documents: plan.json, runs/<id>.point.json and sweep.json
// (rundir::parse_sweep_plan, parse_point_record, parse_sweep_doc), each reader given every input.
// Property: each reads, or throws DataError naming the file, readable; no other exception. What
// reads is written back as a text that reads again and is written back unchanged.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/rundir/sweep_doc.h"

using namespace llmprof;

namespace {

// Reads text with parse (a file name in every error), then checks the rewrite with write.
template <typename Parse, typename Write>
void check_document(const std::string& text, const std::string& file, Parse parse, Write write) {
  std::string written;
  try {
    written = write(parse(text, file, nullptr));
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(file) != std::string::npos,
                "a sweep document's DataError does not name the file");
    return;
  }
  std::string again;
  try {
    again = write(parse(written, "rewritten", nullptr));
  } catch (const DataError& e) {
    fuzz::fail(std::string("the written text does not read back: ") + e.what() + "\n" + written);
  }
  fuzz::check(again == written, "the written text, read and written again, changes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  check_document(text, "sweep/plan.json", rundir::parse_sweep_plan,
                 [](const rundir::SweepPlan& d) { return rundir::sweep_plan_text(d); });
  check_document(text, "sweep/runs/p1.point.json", rundir::parse_point_record,
                 [](const rundir::PointRecord& d) { return rundir::point_record_text(d); });
  check_document(text, "sweep/sweep.json", rundir::parse_sweep_doc,
                 [](const rundir::SweepDoc& d) { return rundir::sweep_doc_text(d); });
  return 0;
}
