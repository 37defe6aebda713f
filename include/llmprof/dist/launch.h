// The local launcher of `llmprof train --nproc N`: N rank processes on this machine (started,
// signalled and reaped through llmprof/process/child.h, the one launcher), each told
// its place through the torchrun-style environment (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, OMP_NUM_THREADS), watched until all have ended.
//
// Faults: a rank that exits non-zero, is killed or is stopped (SIGSTOP; waitpid's WUNTRACED) is
// the run's first failure; the others get grace_s to stop by themselves (their process group's
// timeout names the lost rank), then SIGKILL. SIGINT/SIGTERM to the launcher go to every rank.
// The launcher never prints: ranks' stderr lines and its own notes go to callbacks.
// Torch-free. Under srun nothing here runs: each task is a rank already.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/process/child.h"

namespace llmprof::dist {

// The environment variable a rank started by the launcher carries ("1"), so that a rank never
// launches ranks itself and can tell --nproc's children from srun's tasks.
inline constexpr const char* kLaunchedEnv = "LLMPROF_LAUNCHED";

// ---------------------------------------------------------------------------------------------
// Pure parts

// args without "--nproc N" / "--nproc=N" (every occurrence).
std::vector<std::string> strip_nproc(const std::vector<std::string>& args);

// A rank's arguments: args (already without --nproc), then "--set threads=K" when threads > 0,
// then "--quiet" for ranks > 0 unless args have it (they log warnings and errors only).
std::vector<std::string> rank_args(const std::vector<std::string>& args,
                                   int64_t rank,
                                   int64_t threads);

// Intra-op threads per rank: cores shared evenly among nproc ranks, at least 1 each.
int64_t threads_per_rank(int64_t cores, int64_t nproc);

// MASTER_PORT's value as a port number; throws UsageError naming the value unless 1..65535.
int parse_port(const std::string& value);

// How a rank ended (or stopped): process::Exit's kinds, with the rank and its pid.
struct RankEnd {
  using Kind = process::Exit::Kind;
  int64_t rank = 0;
  pid_t pid = 0;
  Kind kind = Kind::kExited;
  int code = 0;  // the exit code (kExited) or the signal (kKilled, kStopped)
};

// RankEnd from a waitpid status (WIFEXITED, WIFSIGNALED or WIFSTOPPED).
RankEnd rank_end_of(int64_t rank, pid_t pid, int wait_status);

// Whether the rank's end fails the run: any end but exit code 0.
bool is_failure(const RankEnd& end);

// One line naming the rank: "rank 1 (pid 4242) was killed by signal 9 (Killed)",
// "... exited with code 2", "... was stopped by signal 19 (Stopped (signal))".
std::string describe(const RankEnd& end);

// The launcher's exit code: the first failing rank's own code (2 bad input, 1 runtime, 130
// interrupted; a rank killed by SIGINT or SIGTERM counts as interrupted, by another signal or
// stopped as a runtime failure); 130 when interrupted and no rank failed; else 0.
int launch_exit_code(const std::optional<RankEnd>& first_failure, bool interrupted);

// ---------------------------------------------------------------------------------------------
// The OS side

// CPUs this process may run on, and the running executable's path: the one launcher's
// (llmprof/process/child.h), under the names a launcher of ranks has used.
using process::self_executable;
using process::usable_cores;

// A TCP port on addr that nobody listens on now (bound to port 0, then closed).
// Throws IoError when no socket can be bound.
int free_port(const std::string& addr = "127.0.0.1");

// Throws UsageError naming the port when it cannot be bound on addr (busy or refused).
void check_port_free(int port, const std::string& addr = "127.0.0.1");

// This process's command line (/proc/self/cmdline), argv[0] first. Throws IoError.
std::vector<std::string> self_command_line();

struct LaunchOptions {
  // argv of each rank (argv[0] the executable's path); their count is the world size.
  std::vector<std::vector<std::string>> rank_argv;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  int64_t threads = 0;  // OMP_NUM_THREADS of each rank; 0 leaves it as inherited
  double grace_s = 30;  // after the first failure or a stop signal: time to stop alone
  double limit_s = 0;   // the whole launch's guard; 0 = none
  // After a rank exited with 0, the others must end within this time (they are then one
  // collective from their own end; a rank still running after it is a hang); 0 = no limit.
  double finish_window_s = 0;
  // Each complete line a rank > 0 writes to stderr (their stdout is dropped; rank 0 keeps
  // the launcher's stdout and stderr).
  std::function<void(int64_t rank, const std::string& line)> on_rank_line;
  // The launcher's own notes: a rank's failure, the ranks it kills and why.
  std::function<void(const std::string& note)> on_note;
};

struct LaunchResult {
  int exit_code = 0;                     // launch_exit_code of the run
  std::optional<RankEnd> first_failure;  // the rank that failed first, if any
  std::vector<RankEnd> ends;             // every rank's end, in the order they were seen
  bool interrupted = false;              // SIGINT or SIGTERM reached the launcher
  bool killed = false;                   // the launcher killed ranks still running
  std::string reason;                    // why it killed them ("" when it did not)
};

// Starts every rank (own process group, stdin /dev/null, SIGTERM if the launcher dies),
// forwards SIGINT/SIGTERM, and waits for all of them. Throws IoError when a rank cannot be
// started (those already started are killed first).
LaunchResult launch_local(const LaunchOptions& options);

}  // namespace llmprof::dist
