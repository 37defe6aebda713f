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
// Re-executes this command line (without --nproc) as nproc local ranks, each told its place
// through the torchrun-style environment, with `threads` intra-op threads each (0: the cores
// shared among them, through OMP_NUM_THREADS); waits for all of them; returns the launcher's
// exit code. Rank 0 keeps this process's stdout; the others' stderr lines are printed as
// "[rank k] ...". train_flags: each rank also gets train's "--set threads=K" and, ranks > 0,
// "--quiet" (dist::rank_args).
int launch_self(int64_t nproc, int64_t threads, double timeout_s, bool train_flags);

int launch_train(const std::string& config_path,
                 const std::vector<std::string>& overrides,
                 int64_t nproc);

}  // namespace llmprof::cli
