// `llmprof train --nproc N`: the checks and the local launch of N ranks (src/dist's launcher),
// printing the ranks' warnings ("[rank k] ...") and the launcher's notes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmprof::cli {

// Runs `llmprof train` as nproc local ranks (nproc >= 2) and returns the exit code: the first
// failing rank's (2 bad input, 1 runtime, 130 interrupted), 0 when every rank succeeded.
// Throws UsageError for --nproc under srun with several tasks, inside a launched rank, or a busy
// MASTER_PORT; ConfigError for a bad config (checked before any rank starts).
int launch_train(const std::string& config_path,
                 const std::vector<std::string>& overrides,
                 int64_t nproc);

}  // namespace llmprof::cli
