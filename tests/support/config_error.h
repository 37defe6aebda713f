// config_error_of: the ConfigError a call throws, for the config tests' checks of the message.
#pragma once

#include <gtest/gtest.h>

#include "llmprof/error.h"

namespace llmprof::test {

// Runs f and returns the ConfigError it throws; a test failure (and an empty error) if none.
template <typename F>
ConfigError config_error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError";
  return ConfigError("no error thrown");
}

}  // namespace llmprof::test
