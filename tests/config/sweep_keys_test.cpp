// The sweep section's keys (sweep.launcher, sweep.slurm.*) given to a run's --set: `llmprof
// config keys` lists them, so the error says who reads them instead of "unknown key".
#include <gtest/gtest.h>

#include <string>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"

namespace llmprof::config {
namespace {

std::string error_of(const std::string& assignment) {
  Config c;
  try {
    apply_override(c, assignment);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), assignment.substr(0, assignment.find('=')));
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError for " << assignment;
  return "";
}

TEST(ApplyOverride, SweepKeySaysLlmprofSweepReadsItNotUnknownKey) {
  for (const char* set : {"sweep.launcher=slurm", "sweep.slurm.partition=debug"}) {
    const std::string what = error_of(set);
    EXPECT_EQ(what.find("unknown key"), std::string::npos) << what;
    EXPECT_NE(what.find(std::string("--set ") + set), std::string::npos) << what;
    EXPECT_NE(what.find("read by `llmprof sweep` alone"), std::string::npos) << what;
  }
}

TEST(ApplyOverride, KeyMerelyStartingWithSweepIsStillUnknown) {
  const std::string what = error_of("sweeps.launcher=slurm");
  EXPECT_NE(what.find("unknown key 'sweeps.launcher'"), std::string::npos) << what;
}

}  // namespace
}  // namespace llmprof::config
