// The one launcher of child processes (llmprof/process/child.h): fork/exec, wait, signals.
#include "llmprof/process/child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "llmprof/error.h"

extern char** environ;

namespace llmprof::process {

namespace {

// Writes "llmprof: cannot run '<path>': <reason>" to fd 2 with write(2) only (safe between fork
// and exec), then exits 127 as a shell does for a program it cannot run.
[[noreturn]] void child_fail(const char* path) {
  const char* err = std::strerror(errno);
  for (const char* s : {"llmprof: cannot run '", path, "': ", err, "\n"}) {
    ssize_t ignored = ::write(2, s, std::strlen(s));
    (void)ignored;
  }
  ::_exit(127);
}

// This process's environment with spec.env's variables replaced (set last).
std::vector<std::string> environment_of(const ChildSpec& spec) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& kv : spec.env) replaced = replaced || kv.first == name;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& kv : spec.env) env.push_back(kv.first + "=" + kv.second);
  return env;
}

// The descriptors the child gets as 1 and 2, and the parent's read ends. Everything is opened
// with O_CLOEXEC: the child keeps only what dup2 gives it.
struct Fds {
  int null = -1, out = -1, err = -1;  // the child's stdout and stderr (-1: inherited)
  int out_read = -1, err_read = -1;   // the parent's ends of the pipes
  std::vector<int> all;               // closed by the parent after the fork

  void close_all() {
    for (int fd : all) ::close(fd);
    for (int fd : {out_read, err_read}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

void make_pipe(const ChildSpec& spec, Fds& f, int& read_end, int& write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    const int err = errno;
    f.close_all();
    throw IoError(fmt::format("cannot start {} (pipe): {}", spec.name, std::strerror(err)));
  }
  read_end = p[0];
  write_end = p[1];
  f.all.push_back(p[1]);
}

Fds open_fds(const ChildSpec& spec) {
  Fds f;
  f.null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (f.null >= 0) f.all.push_back(f.null);
  switch (spec.output) {
    case Output::kInherit:
      break;
    case Output::kLog: {
      const int fd = ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) {
        const int err = errno;
        f.close_all();
        throw IoError(fmt::format("cannot create the log of {} '{}': {}", spec.name, spec.log_path,
                                  std::strerror(err)));
      }
      f.all.push_back(fd);
      f.out = f.err = fd;
      break;
    }
    case Output::kStderrPipe:
      f.out = f.null;
      make_pipe(spec, f, f.err_read, f.err);
      break;
    case Output::kCapture:
      make_pipe(spec, f, f.out_read, f.out);
      make_pipe(spec, f, f.err_read, f.err);
      break;
  }
  return f;
}

// The child's side between fork and exec: system calls only.
[[noreturn]] void exec_child(const ChildSpec& spec,
                             const Fds& f,
                             char* const* args,
                             char* const* envp,
                             const sigset_t& old_set,
                             pid_t parent) {
  ::signal(SIGINT, SIG_DFL);  // this process's handlers stay in this process
  ::signal(SIGTERM, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &old_set, nullptr);
  if (spec.own_group) ::setpgid(0, 0);
  if (spec.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(128 + SIGTERM);  // the parent died before prctl
  }
  if (f.null >= 0) ::dup2(f.null, 0);
  if (f.out >= 0) ::dup2(f.out, 1);
  if (f.err >= 0) ::dup2(f.err, 2);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) ::_exit(126);
  if (envp != nullptr) {
    ::execve(args[0], args, envp);
  } else {
    ::execv(args[0], args);
  }
  child_fail(args[0]);
}

}  // namespace

Child spawn(const ChildSpec& spec) {
  if (spec.argv.empty()) throw IoError(fmt::format("cannot start {}: no program", spec.name));
  // Everything the child needs is prepared here: after fork it may only make system calls.
  std::vector<char*> args, envp;
  for (const std::string& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env =
      spec.env.empty() ? std::vector<std::string>{} : environment_of(spec);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  Fds f = open_fds(spec);
  sigset_t stop_set, old_set;
  sigemptyset(&stop_set);
  sigaddset(&stop_set, SIGINT);
  sigaddset(&stop_set, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stop_set, &old_set);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0)
    exec_child(spec, f, args.data(), spec.env.empty() ? nullptr : envp.data(), old_set, parent);
  const int fork_errno = errno;
  // Both sides set the group: no window where a signal sent to it misses the child.
  if (pid > 0 && spec.own_group) ::setpgid(pid, pid);
  ::sigprocmask(SIG_SETMASK, &old_set, nullptr);
  for (int fd : f.all) ::close(fd);
  if (pid < 0) {
    for (int fd : {f.out_read, f.err_read}) {
      if (fd >= 0) ::close(fd);
    }
    throw IoError(fmt::format("cannot start {} (fork): {}", spec.name, std::strerror(fork_errno)));
  }
  if (spec.output == Output::kStderrPipe) ::fcntl(f.err_read, F_SETFL, O_NONBLOCK);
  return Child{pid, f.out_read, f.err_read};
}

int wait_exit(pid_t pid) {
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return 127 << 8;  // not our child: report it as failed
  }
  return wait_status;
}

bool try_reap(pid_t pid, int& wait_status, bool stopped_too) {
  const int flags = WNOHANG | (stopped_too ? WUNTRACED : 0);
  while (true) {
    const pid_t r = ::waitpid(pid, &wait_status, flags);
    if (r == pid) return true;
    if (r == 0) return false;
    if (errno != EINTR) {  // not our child any more: report it as failed rather than wait forever
      wait_status = 127 << 8;
      return true;
    }
  }
}

void send_signal(pid_t pid, int sig) {
  if (pid <= 0) return;
  if (::getpgid(pid) == pid) {
    ::kill(-pid, sig);  // the child and its children: each gets the signal once
  } else {
    ::kill(pid, sig);
  }
}

Exit exit_of(int wait_status) {
  Exit e;
  if (WIFSIGNALED(wait_status)) {
    e.kind = Exit::Kind::kKilled;
    e.code = WTERMSIG(wait_status);
  } else if (WIFSTOPPED(wait_status)) {
    e.kind = Exit::Kind::kStopped;
    e.code = WSTOPSIG(wait_status);
  } else {
    e.kind = Exit::Kind::kExited;
    e.code = WEXITSTATUS(wait_status);
  }
  return e;
}

bool is_failure(const Exit& e) { return e.kind != Exit::Kind::kExited || e.code != 0; }

bool is_stop_request(const Exit& e) {
  if (e.kind == Exit::Kind::kKilled) return e.code == SIGINT || e.code == SIGTERM;
  return e.kind == Exit::Kind::kExited && e.code == kExitInterrupted;
}

std::string describe(const Exit& e) {
  switch (e.kind) {
    case Exit::Kind::kExited:
      return fmt::format("exited with code {}", e.code);
    case Exit::Kind::kKilled:
      return fmt::format("was killed by signal {} ({})", e.code, ::strsignal(e.code));
    case Exit::Kind::kStopped:
      return fmt::format("was stopped by signal {} ({})", e.code, ::strsignal(e.code));
  }
  return "";
}

}  // namespace llmprof::process
