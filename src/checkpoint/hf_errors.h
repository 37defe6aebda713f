// The error of a Hugging Face folder llmprof cannot take, for adopting (hf_adopt.cpp) and
// loading (hf_load.cpp) one. Private to the checkpoint concern.
#pragma once

#include <fmt/format.h>

#include <string>

#include "llmprof/config/config.h"
#include "llmprof/error.h"

namespace llmprof::checkpoint::detail {

// A ConfigError naming the key that gave the folder (model.init_from, --checkpoint).
inline ConfigError key_error(const config::Config& cfg,
                             const std::string& key,
                             const std::string& what) {
  return ConfigError(fmt::format("{}: {}", key, what), cfg.source_file, key);
}

}  // namespace llmprof::checkpoint::detail
