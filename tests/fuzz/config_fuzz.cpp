// The config loader on any document: YAML, or JSON when the text starts with '{' (the loader picks
// the parser by the file's extension). Properties:
//  - it loads or throws ConfigError naming the file and a line (no other exception, no crash);
//  - a loaded config written back (to_yaml, what `llmprof config show` prints) loads to the same
//    config, compared through to_yaml, which prints every key.
#include <cstdint>
#include <string>

#include "config_round_trip.h"
#include "fuzz_support.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"

using namespace llmprof;

namespace {

bool looks_like_json(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  const std::string path =
      fuzz::write_scratch(looks_like_json(text) ? "config.json" : "config.yaml", text);
  config::Config cfg;
  try {
    cfg = config::load_config(path);
  } catch (const ConfigError& e) {
    fuzz::check_readable(e.what());
    fuzz::check(e.file() == path, "a ConfigError of the file does not name it");
    // A document without keys (empty, only comments) has no position to point at.
    fuzz::check(e.line() > 0 || std::string(e.what()).find("is empty") != std::string::npos,
                "a ConfigError of the file gives no line");
    return 0;
  }
  fuzz::check_config_round_trip(cfg);
  return 0;
}
