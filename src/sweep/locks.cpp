// The sweep directory's locks, the host name and the scheduler's sleep (locks.h).
#include "locks.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "llmprof/error.h"

namespace llmprof::sweep::detail {

namespace {

// The pid a DirLock's file names (its last taker), 0 when none or unreadable.
pid_t lock_holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  const long pid = std::strtol(buf, nullptr, 10);
  return pid > 0 ? static_cast<pid_t>(pid) : 0;
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

DirLock::DirLock(const std::string& path, double timeout_s) {
  // No O_CLOEXEC: point processes inherit the open file description, and with it the lock.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd_ < 0) throw IoError("cannot open lock file '" + path + "': " + std::strerror(errno));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool told = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int err = errno;
      ::close(fd_);
      throw IoError("cannot lock '" + path + "': " + std::strerror(err));
    }
    // A live taker is another sweep at work: say who at once. A dead one left points behind
    // (they inherited the lock and finish their step on the SIGTERM its death sent): wait.
    const pid_t holder = lock_holder_pid(fd_);
    if (holder > 0 && holder != ::getpid() && process_alive(holder)) {
      ::close(fd_);
      throw UsageError(fmt::format(
          "sweep directory is in use: llmprof sweep (pid {}) holds '{}'; wait for it, stop it "
          "(kill -INT {}) or use another --name",
          holder, path, holder));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::close(fd_);
      throw UsageError(fmt::format(
          "sweep directory is in use: '{}' is still locked by points of llmprof sweep (pid {}, "
          "gone) after {:.0f} s; wait for them or use another --name",
          path, holder, timeout_s));
    }
    if (!told) {
      spdlog::info("waiting for {}: points of a killed sweep (pid {}) still run there", path,
                   holder);
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Ours: the file names this process for the next one that finds it taken. A lock file left by
  // a dead sweep blocks nothing (the kernel drops an flock with its last holder).
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    spdlog::warn("cannot write the pid into {}: {}", path, std::strerror(errno));
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // children may still hold it; the lock goes with the last one
}

FileLock::FileLock(const std::string& path, double wait_s, bool inherit) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | (inherit ? 0 : O_CLOEXEC), 0644);
  if (fd_ < 0) throw IoError("cannot open lock file '" + path + "': " + std::strerror(errno));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (!(locked_ = ::flock(fd_, LOCK_EX | (wait_s < 0 ? 0 : LOCK_NB)) == 0)) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      throw IoError("cannot lock '" + path + "': " + std::strerror(errno));
    }
    if (wait_s >= 0 && std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // an inheriting child keeps the lock until it exits too
}

bool is_locked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // a shared probe: it never keeps a claimer out for longer than this call
  return held;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

void sleep_ms(int64_t ms) {
  struct timespec ts {
    ms / 1000, (ms % 1000) * 1000000
  };
  ::nanosleep(&ts, nullptr);  // EINTR on a signal: return early, the caller checks the flag
}

}  // namespace llmprof::sweep::detail
