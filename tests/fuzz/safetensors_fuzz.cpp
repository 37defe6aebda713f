// The safetensors reader (hf::SafetensorsFile) on any file. Properties: open() accepts the file
// or throws DataError naming it; for an accepted file every tensor reads as float (or throws
// DataError for a dtype with no float conversion) without touching bytes outside the mapping,
// which AddressSanitizer would report.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/error.h"
#include "llmprof/hf/safetensors.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch("model.safetensors", fuzz::as_text(data, size));
  try {
    const hf::SafetensorsFile file = hf::SafetensorsFile::open(path);
    file.metadata();
    for (const std::string& name : file.names()) {
      try {
        file.read_float(name);
      } catch (const DataError& e) {
        fuzz::check_readable(e.what());
        fuzz::check(std::string(e.what()).find(path) != std::string::npos,
                    "a tensor's DataError does not name the file");
      }
    }
  } catch (const DataError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(std::string(e.what()).find(path) != std::string::npos,
                "a safetensors DataError does not name the file");
  }
  return 0;
}
