// The CUPTI fixture reader (gpu::parse_fixture, JSON lines). Properties: it parses or throws
// DataError naming the source and line; a parsed fixture written back (format_fixture, what
// write_fixture writes) parses to a fixture that writes the same text.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "support/gpu_fixture.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  gpu::GpuFixture fixture;
  try {
    fixture = gpu::parse_fixture(text, "fuzz.jsonl");
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find("fuzz.jsonl") != std::string::npos,
                "a fixture DataError does not name the source");
    return 0;
  }
  const std::string written = gpu::format_fixture(fixture);
  try {
    fuzz::check(gpu::format_fixture(gpu::parse_fixture(written, "written.jsonl")) == written,
                "the fixture written back reads differently");
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::fail(std::string("the fixture written back does not parse: ") + e.what());
  }
  return 0;
}
