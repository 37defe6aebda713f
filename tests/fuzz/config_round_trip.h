// The property both config targets end with: a loaded config written back (to_yaml, what
// `llmprof config show` prints) loads to the same config, compared through to_yaml, which prints
// every key.
#pragma once

#include <string>

#include "fuzz_support.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"

namespace llmprof::fuzz {

inline void check_config_round_trip(const config::Config& cfg) {
  const std::string shown = config::to_yaml(cfg);
  const std::string shown_path = write_scratch("shown.yaml", shown);
  try {
    config::Config again = config::load_config(shown_path);
    again.source_file = cfg.source_file;  // not a key: to_yaml prints it as a comment
    check(config::to_yaml(again) == shown, "the config written back loads to a different one");
  } catch (const ConfigError& e) {
    fail(std::string("the config written back does not load: ") + e.what());
  }
}

}  // namespace llmprof::fuzz
