// `--set key=value` overrides: each line of the input is one assignment, applied in order to the
// defaults, then the cross-key checks. Properties: an assignment applies or throws ConfigError,
// which names the key whenever the assignment has one (text before '='); a config that passes
// loads back from its to_yaml unchanged.
#include <cstdint>
#include <string>

#include "config_round_trip.h"
#include "fuzz_support.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  config::Config cfg;
  std::string assignment;
  try {
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) end = text.size();
      assignment = std::string(text.substr(begin, end - begin));
      config::apply_override(cfg, assignment);
      begin = end + 1;
    }
    assignment.clear();
    config::validate(cfg);
  } catch (const ConfigError& e) {
    fuzz::check_readable(e.what());
    const size_t eq = assignment.find('=');
    fuzz::check(eq == std::string::npos || eq == 0 || !e.key().empty(),
                "a ConfigError of a --set key=value does not name the key");
    return 0;
  }
  fuzz::check_config_round_trip(cfg);
  return 0;
}
