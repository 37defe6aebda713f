#include "tuned_link.h"

#include <fmt/format.h>

#include <filesystem>

#include "llmprof/error.h"
#include "llmprof/rundir/env.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/tune_doc.h"

namespace llmprof::report {

namespace {

// The --config / -c / --config=F of a command line; "" when none.
std::string config_argument(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if ((argv[i] == "--config" || argv[i] == "-c") && i + 1 < argv.size()) return argv[i + 1];
    if (argv[i].rfind("--config=", 0) == 0) return argv[i].substr(9);
  }
  return "";
}

}  // namespace

std::string tuned_from_line(const std::string& run_dir, const std::string& label) {
  namespace fs = std::filesystem;
  const std::string env = rundir::path(run_dir, rundir::kEnv);
  std::error_code ec;
  if (!fs::exists(env, ec)) return "";
  try {
    const std::string config = config_argument(rundir::read_env(env).command_line);
    if (fs::path(config).filename() != rundir::kTunedConfig) return "";
    const std::string dir = fs::path(config).parent_path().string();
    const std::string tune = rundir::path(dir.empty() ? "." : dir, rundir::kTune);
    if (!fs::exists(tune, ec)) return "";
    const rundir::TuneDoc d = rundir::read_tune_doc(tune);
    return fmt::format("{}: trained from the tuned.yaml of `llmprof tune`: {} ({}): {}", label,
                       tune, rundir::path(dir.empty() ? "." : dir, rundir::kTuneTable),
                       d.conclusion);
  } catch (const Error&) {
    return "";  // a report never fails for a link back
  }
}

}  // namespace llmprof::report
