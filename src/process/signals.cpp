// The launcher's other half (llmprof/process/child.h): stop signals recorded while children run,
// a command run to its end with its output captured, and where programs and cores are.
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "llmprof/error.h"
#include "llmprof/process/child.h"

namespace llmprof::process {

namespace {

volatile std::sig_atomic_t g_stop_count = 0;
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_child_stop_signal(int sig) {
  g_stop_signal = sig;
  g_stop_count = g_stop_count + 1;
}

// A regular file this process may execute.
bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Reads both pipes as they fill until both are closed; closes them.
void read_both(int out_fd, int err_fd, Captured& c) {
  struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
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
}

}  // namespace

StopSignals::StopSignals(bool every) {
  g_stop_count = 0;
  g_stop_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_child_stop_signal;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a signal cuts a caller's sleep or poll short. Once: the handler resets itself,
  // so a second signal acts as usual.
  sa.sa_flags = every ? 0 : SA_RESETHAND;
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignals::signal() const { return g_stop_signal; }

int StopSignals::count() const { return g_stop_count; }

Captured run_capture(const std::vector<std::string>& argv) {
  ChildSpec spec;
  spec.argv = argv;
  spec.name = "'" + (argv.empty() ? std::string() : argv[0]) + "'";
  spec.output = Output::kCapture;
  spec.die_with_parent = false;
  const Child child = spawn(spec);
  Captured c;
  read_both(child.out_fd, child.err_fd, c);
  c.wait_status = wait_exit(child.pid);
  return c;
}

std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return is_executable(program) ? program : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (is_executable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

std::string self_executable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) {
    throw IoError(std::string("cannot find the llmprof executable (/proc/self/exe): ") +
                  std::strerror(errno));
  }
  return std::string(buf, static_cast<size_t>(n));
}

int64_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    return std::max<int64_t>(1, CPU_COUNT(&set));
  }
  return std::max<int64_t>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
}

}  // namespace llmprof::process
