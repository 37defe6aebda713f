#include "process.h"

#include <fcntl.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

pid_t spawn_point(const std::vector<std::string>& argv, const std::string& log_path) {
  // Everything the child needs is prepared here: after fork it may only make system calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0)
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
    ::close(log_fd);
    throw IoError(std::string("cannot start a point process (fork): ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);  // the sweep's handlers stay in the sweep
    ::signal(SIGTERM, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &old_set, nullptr);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(128 + SIGTERM);  // the sweep died before prctl
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execv(args[0], args.data());
    child_fail("cannot run", args[0]);
  }
  ::setpgid(pid, pid);  // also here, so it holds before the parent sends any signal
  ::sigprocmask(SIG_SETMASK, &old_set, nullptr);
  ::close(log_fd);
  return pid;
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

void send_signal(pid_t pid, int sig) { ::kill(pid, sig); }

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

DirLock::DirLock(const std::string& path, double timeout_s) {
  // No O_CLOEXEC: point processes inherit the open file description, and with it the lock.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd_ < 0) throw IoError("cannot open lock file '" + path + "': " + std::strerror(errno));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool told = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      throw IoError("cannot lock '" + path + "': " + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::close(fd_);
      throw UsageError("sweep directory is in use: '" + path +
                       "' is locked by another llmprof sweep or its points; wait for it or use "
                       "another --name");
    }
    if (!told) {
      spdlog::info("waiting for {}: another sweep, or points of a killed one, still run there",
                   path);
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // children may still hold it; the lock goes with the last one
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
