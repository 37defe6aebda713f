#include "process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <thread>

#include "llmprof/error.h"

namespace llmprof::sweep::detail {
namespace {

volatile std::sig_atomic_t g_sweep_stop_signal = 0;

extern "C" void on_sweep_stop_signal(int sig) { g_sweep_stop_signal = sig; }

// Writes a message to fd 2 with write(2) only: safe between fork and exec.
void child_fail(const char* what, const char* path) {
  const char* err = std::strerror(errno);
  for (const char* s : {"llmprof sweep: ", what, " '", path, "': ", err, "\n"}) {
    ssize_t ignored = ::write(2, s, std::strlen(s));
    (void)ignored;
  }
  ::_exit(127);
}

}  // namespace

pid_t spawn_point(const std::vector<std::string>& argv,
                  const std::string& log_path,
                  bool own_group) {
  // Everything the child needs is prepared here: after fork it may only make system calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int log_fd = log_path.empty()
                   ? -2
                   : ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd == -1)
    throw IoError("cannot create point log '" + log_path + "': " + std::strerror(errno));
  // SIGINT/SIGTERM are blocked across fork: one arriving before the child has dropped the
  // sweep's handlers stays pending and reaches the child with the default action, never lost.
  sigset_t stop_set, old_set;
  sigemptyset(&stop_set);
  sigaddset(&stop_set, SIGINT);
  sigaddset(&stop_set, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stop_set, &old_set);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::sigprocmask(SIG_SETMASK, &old_set, nullptr);
    if (log_fd >= 0) ::close(log_fd);
    throw IoError(std::string("cannot start a point process (fork): ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);  // the sweep's handlers stay in the sweep
    ::signal(SIGTERM, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &old_set, nullptr);
    if (own_group) ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(128 + SIGTERM);  // the sweep died before prctl
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    ::execv(args[0], args.data());
    child_fail("cannot run", args[0]);
  }
  if (own_group) ::setpgid(pid, pid);  // also here, so it holds before the parent sends a signal
  ::sigprocmask(SIG_SETMASK, &old_set, nullptr);
  if (log_fd >= 0) ::close(log_fd);
  return pid;
}

int wait_exit(pid_t pid) {
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return 127 << 8;  // not our child: report it as failed
  }
  return wait_status;
}

bool try_reap(pid_t pid, int& wait_status) {
  while (true) {
    pid_t r = ::waitpid(pid, &wait_status, WNOHANG);
    if (r == pid) return true;
    if (r == 0) return false;
    if (errno != EINTR) {  // not our child any more: report it as failed rather than wait forever
      wait_status = 127 << 8;
      return true;
    }
  }
}

void send_signal(pid_t pid, int sig) {
  if (::getpgid(pid) == pid) {
    ::kill(-pid, sig);  // the point's run-point and its train: each gets the signal once
  } else {
    ::kill(pid, sig);
  }
}

StopSignals::StopSignals() {
  g_sweep_stop_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_sweep_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // no SA_RESTART: a signal cuts the poll sleep short
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignals::signal() const { return g_sweep_stop_signal; }

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

Captured run_capture(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw IoError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw IoError(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw IoError("cannot run '" + argv[0] + "' (fork): " + std::strerror(errno));
  }
  if (pid == 0) {
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execv(args[0], args.data());
    child_fail("cannot run", args[0]);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Captured c;
  // Both pipes are read as they fill (poll), so a chatty stderr cannot block the child.
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&c.out, &c.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  c.wait_status = wait_exit(pid);
  return c;
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

int64_t available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  auto n = static_cast<int64_t>(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

void sleep_ms(int64_t ms) {
  struct timespec ts {
    ms / 1000, (ms % 1000) * 1000000
  };
  ::nanosleep(&ts, nullptr);  // EINTR on a signal: return early, the caller checks the flag
}

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw IoError("cannot find the llmprof executable (/proc/self/exe): " + ec.message());
  return p.string();
}

}  // namespace llmprof::sweep::detail
