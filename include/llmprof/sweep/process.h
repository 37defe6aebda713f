// The OS side of a sweep: point processes (fork/exec, waitpid), the stop signals, the core count
// and the sweep directory's lock. Public (namespace detail) because the A/B engine (llmprof/ab)
// starts its repetitions with the same spawn_point/wait_exit rather than a second copy.
//
// Each point runs in its own process group, so a terminal's Ctrl-C reaches only the sweep, which
// forwards it to each running point exactly once (train treats a second SIGINT as "kill now").
// A point gets SIGTERM if the sweep dies (PR_SET_PDEATHSIG) and inherits the sweep's directory
// lock, so a re-run waits until points of a killed sweep have written their summaries.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

namespace llmprof::sweep::detail {

// Starts argv (argv[0] the executable's path), stdin from /dev/null, stdout and stderr to
// log_path (created or truncated; "" keeps this process's), in a process group of its own when
// own_group. Throws IoError naming the log or the executable.
pid_t spawn_point(const std::vector<std::string>& argv,
                  const std::string& log_path,
                  bool own_group = true);

// Blocks until pid exits (signals do not cut it short); its wait status.
int wait_exit(pid_t pid);

// Non-blocking: true, with the wait status, once pid has exited.
bool try_reap(pid_t pid, int& wait_status);

// Sends sig to pid (a point process; its whole group when it leads one); no-op if it has gone.
void send_signal(pid_t pid, int sig);

// SIGINT/SIGTERM while alive: recorded, not fatal; a second signal kills as usual.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The signal received, 0 when none.
  int signal() const;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

// An exclusive flock on path, kept by point processes (they inherit the descriptor) after this
// process dies; the file holds the taker's pid. A live taker (another sweep): throws UsageError
// naming its pid at once. A dead one whose points still hold the lock: waits up to timeout_s for
// them, then throws UsageError naming path.
class DirLock {
 public:
  DirLock(const std::string& path, double timeout_s);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

// An exclusive flock on path (created if absent). Held by a run-point for its point while the
// point runs: it goes with the last process holding it, so a killed task frees its point, and
// Slurm's re-queue of a task still running elsewhere finds it taken. inherit: child processes
// (the point's train) hold it too.
class FileLock {
 public:
  // Tries for up to wait_s seconds (0: once; < 0: waits as long as it takes).
  FileLock(const std::string& path, double wait_s, bool inherit);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  // Whether this process got the lock.
  bool locked() const { return locked_; }

 private:
  int fd_ = -1;
  bool locked_ = false;
};

// True while some process holds an flock on path (a running point's); false when absent.
bool is_locked(const std::string& path);

// A finished command: its wait status and what it wrote.
struct Captured {
  int wait_status = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs argv (argv[0] a path) to its end, stdin from /dev/null, stdout and stderr captured.
// Throws IoError when it cannot be started.
Captured run_capture(const std::vector<std::string>& argv);

// The path of program on $PATH, "" when it is not there.
std::string find_program(const std::string& name);

// This host's name, "" if unknown.
std::string host_name();

// Cores this process may run on (sched_getaffinity), at least 1.
int64_t available_cores();

// Sleeps for ms milliseconds or until a signal arrives.
void sleep_ms(int64_t ms);


// The running executable (/proc/self/exe). Throws IoError.
std::string self_executable();

}  // namespace llmprof::sweep::detail
