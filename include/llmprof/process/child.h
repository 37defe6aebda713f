// llmprof's one launcher of child processes: `llmprof train --nproc`'s ranks (dist), a sweep's
// points and their train (sweep), the A/B engine's repetitions (ab), Slurm's commands (sweep) and
// gnuplot (plot) all start, signal, wait for and name their children here. Torch-free; the
// policies (which child to start when, deadlines, what a failure means) stay with the callers.
//
// A child is started with fork/exec. SIGINT/SIGTERM are blocked across the fork, so one arriving
// before the child has dropped this process's handlers stays pending and reaches the child with
// the default action, never lost. stdin is /dev/null.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llmprof::process {

// Where a child's stdout and stderr go.
enum class Output {
  kInherit,     // this process's
  kLog,         // both to ChildSpec::log_path (created or truncated)
  kStderrPipe,  // stdout to /dev/null, stderr into a pipe (Child::err_fd, non-blocking)
  kCapture,     // stdout and stderr into two pipes (Child::out_fd, Child::err_fd)
};

struct ChildSpec {
  std::vector<std::string> argv;         // argv[0] the executable's path
  std::string name = "a child process";  // in errors: "cannot start <name> (fork): ..."
  // Variables set in the child, replacing this process's of the same name; the rest inherited.
  std::vector<std::pair<std::string, std::string>> env;
  Output output = Output::kInherit;
  std::string log_path;  // Output::kLog
  std::string cwd;       // "" keeps this process's; a directory the child cannot enter: exit 126
  // A process group of its own: a terminal's Ctrl-C then reaches only this process, which
  // forwards it (send_signal reaches the child and its children once).
  bool own_group = false;
  // SIGTERM to the child when this process dies (PR_SET_PDEATHSIG).
  bool die_with_parent = true;
};

// A started child: its pid and the read ends of its pipes (-1 when none; the caller closes them).
struct Child {
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
};

// Starts spec.argv. A program that cannot be executed exits 127 after one line on its stderr
// ("llmprof: cannot run '<path>': <reason>"). Throws IoError naming spec.name (fork, pipe) or
// the log.
Child spawn(const ChildSpec& spec);

// Blocks until pid exits (signals do not cut it short); its wait status. Not this process's
// child: a failure (exit 127).
int wait_exit(pid_t pid);

// Non-blocking: true, with the wait status, once pid has exited (or, with stopped_too, stopped:
// WUNTRACED). Not this process's child any more: true with a failure (exit 127).
bool try_reap(pid_t pid, int& wait_status, bool stopped_too = false);

// Sends sig to pid: to its whole process group when it leads one. A child that has gone: no-op.
void send_signal(pid_t pid, int sig);

// How a child ended (or stopped), from its wait status.
struct Exit {
  enum class Kind { kExited, kKilled, kStopped };
  Kind kind = Kind::kExited;
  int code = 0;  // the exit code (kExited) or the signal (kKilled, kStopped)
};
Exit exit_of(int wait_status);

// Any end but exit code 0.
bool is_failure(const Exit& e);

// Stopped because it was asked to: killed by SIGINT or SIGTERM, or exited 130 (llmprof's code
// for a stop signal).
bool is_stop_request(const Exit& e);

// "exited with code 2", "was killed by signal 9 (Killed)", "was stopped by signal 19 (Stopped
// (signal))": what happened, after the caller's name of the child.
std::string describe(const Exit& e);

// SIGINT/SIGTERM recorded while alive instead of ending this process; the previous handlers come
// back with its end. One at a time per process.
class StopSignals {
 public:
  // every = false: the first signal is recorded, a second one acts as usual (kills); true: each
  // one is recorded (count() says how many).
  explicit StopSignals(bool every = false);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int signal() const;  // the last signal received, 0 when none
  int count() const;   // how many were received

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// A finished command: its wait status and what it wrote.
struct Captured {
  int wait_status = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs argv (argv[0] a path) to its end, stdout and stderr captured (both read as they fill, so a
// chatty stderr cannot block it). Throws IoError when it cannot be started.
Captured run_capture(const std::vector<std::string>& argv);

// The full path of program (a name searched on $PATH, or a path): an executable regular file; ""
// when there is none.
std::string find_program(const std::string& program);

// The running executable (/proc/self/exe). Throws IoError.
std::string self_executable();

// CPUs this process may run on (sched_getaffinity), at least 1.
int64_t usable_cores();

}  // namespace llmprof::process
