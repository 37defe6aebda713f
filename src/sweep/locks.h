// The sweep directory's locks (the sweep's, a point's, the tables'), this host's name and the
// scheduler's interruptible sleep. Private to sweep; its child processes are started through
// llmprof/process/child.h, the one launcher.
//
// Each point runs in its own process group, so a terminal's Ctrl-C reaches only the sweep, which
// forwards it to each running point exactly once (train treats a second SIGINT as "kill now").
// A point gets SIGTERM if the sweep dies (PR_SET_PDEATHSIG) and inherits the sweep's directory
// lock, so a re-run waits until points of a killed sweep have written their summaries.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace llmprof::sweep::detail {

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

// This host's name, "" if unknown.
std::string host_name();

// Sleeps for ms milliseconds or until a signal arrives.
void sleep_ms(int64_t ms);

}  // namespace llmprof::sweep::detail
