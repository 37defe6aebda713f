// The launcher's pure parts (arguments, threads, exit codes, descriptions) and its small OS
// helpers (ports, the command line). The rank processes: launch_local.cpp, through
// llmprof/process/child.h (which also gives the cores and the running executable).
#include "llmprof/dist/launch.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>

#include "llmprof/error.h"

namespace llmprof::dist {

std::vector<std::string> strip_nproc(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;  // and its value
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  return out;
}

std::vector<std::string> rank_args(const std::vector<std::string>& args,
                                   int64_t rank,
                                   int64_t threads) {
  std::vector<std::string> out = args;
  if (threads > 0) out.insert(out.end(), {"--set", fmt::format("threads={}", threads)});
  const bool quiet = std::find_if(args.begin(), args.end(), [](const std::string& a) {
                       return a == "--quiet" || a == "-q";
                     }) != args.end();
  if (rank > 0 && !quiet) out.push_back("--quiet");
  return out;
}

int64_t threads_per_rank(int64_t cores, int64_t nproc) {
  if (nproc < 1) nproc = 1;
  return std::max<int64_t>(1, cores / nproc);
}

int parse_port(const std::string& value) {
  size_t used = 0;
  long port = -1;
  try {
    port = std::stol(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || port < 1 || port > 65535) {
    throw UsageError("MASTER_PORT='" + value + "' is not a TCP port (1..65535)");
  }
  return static_cast<int>(port);
}

RankEnd rank_end_of(int64_t rank, pid_t pid, int wait_status) {
  const process::Exit e = process::exit_of(wait_status);
  RankEnd end;
  end.rank = rank;
  end.pid = pid;
  end.kind = e.kind;
  end.code = e.code;
  return end;
}

bool is_failure(const RankEnd& end) { return process::is_failure({end.kind, end.code}); }

std::string describe(const RankEnd& end) {
  return fmt::format("rank {} (pid {}) {}", end.rank, end.pid,
                     process::describe({end.kind, end.code}));
}

int launch_exit_code(const std::optional<RankEnd>& first_failure, bool interrupted) {
  if (!first_failure) return interrupted ? kExitInterrupted : kExitOk;
  switch (first_failure->kind) {
    case RankEnd::Kind::kExited:
      return first_failure->code;
    case RankEnd::Kind::kKilled:
      if (first_failure->code == SIGINT || first_failure->code == SIGTERM) return kExitInterrupted;
      return kExitRuntime;
    case RankEnd::Kind::kStopped:
      break;
  }
  return kExitRuntime;
}

namespace {

// A TCP socket bound to addr:port (0: any free port); -1 with errno set when it cannot be.
int bind_tcp(const std::string& addr, int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) {
    errno = EINVAL;
    return -1;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // SO_REUSEADDR as c10d's TCPStore sets it: a port in TIME_WAIT is free to it, a listener's
  // port is not.
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

}  // namespace

int free_port(const std::string& addr) {
  const int fd = bind_tcp(addr, 0);
  if (fd < 0) {
    throw IoError("cannot find a free TCP port on " + addr + ": " + std::strerror(errno));
  }
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  const int rc = ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  ::close(fd);
  if (rc != 0) throw IoError(std::string("cannot read a bound port: ") + std::strerror(errno));
  return ntohs(sa.sin_port);
}

void check_port_free(int port, const std::string& addr) {
  const int fd = bind_tcp(addr, port);
  if (fd < 0) {
    throw UsageError(
        fmt::format("MASTER_PORT {} is busy on {} ({}); unset MASTER_PORT to "
                    "let llmprof pick a free port, or choose another",
                    port, addr, std::strerror(errno)));
  }
  ::close(fd);
}

std::vector<std::string> self_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  if (!in) throw IoError("cannot read /proc/self/cmdline");
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  size_t start = 0;
  while (start < all.size()) {
    const size_t nul = all.find('\0', start);
    const size_t stop = nul == std::string::npos ? all.size() : nul;
    args.push_back(all.substr(start, stop - start));
    start = stop + 1;
  }
  return args;
}

}  // namespace llmprof::dist
