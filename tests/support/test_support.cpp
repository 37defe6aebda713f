#include "support/test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace fs = std::filesystem;

namespace llmprof::test {

std::string shared_data_dir() {
#ifdef LLMPROF_SHARED_DATA_DIR
  std::error_code ec;
  fs::path p = fs::weakly_canonical(LLMPROF_SHARED_DATA_DIR, ec);
  if (!ec && fs::is_directory(p)) return p.string();
#endif
  return {};
}

std::string shared_data(const std::string& relative) {
  std::string dir = shared_data_dir();
  return dir.empty() ? std::string() : dir + "/" + relative;
}

std::string fuzz_regression(const std::string& target, const std::string& name) {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/fuzz/regressions/" + target + "/" + name;
}

ScratchDir::ScratchDir(const std::string& tag) {
  std::random_device rd;
  fs::path base = fs::temp_directory_path();
  for (int i = 0; i < 100; ++i) {
    fs::path p = base / (tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    if (fs::create_directory(p)) {
      path_ = p.string();
      return;
    }
  }
  throw std::runtime_error("cannot create a scratch directory under " + base.string());
}

namespace {
int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }
}  // namespace

ScratchDir::~ScratchDir() {
  // nftw rather than std::filesystem::remove_all: PyTorch 2.x's libtorch.so exports its own
  // std::filesystem::remove_all, which crashes when interposed (seen with torch 2.11 on GPU hosts).
  if (std::getenv("LLMPROF_KEEP_SCRATCH") == nullptr) {
    ::nftw(path_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }
}

void write_file(const std::string& path, const std::string& text) {
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string llmprof_binary() {
#ifdef LLMPROF_BINARY
  return LLMPROF_BINARY;
#else
  return "llmprof";
#endif
}

CommandResult run_llmprof(const std::vector<std::string>& args) {
  CommandResult result;
  int fds[2];
  if (::pipe(fds) != 0) return result;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    std::string bin = llmprof_binary();
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(bin.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) result.output.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  return result;
}

int spawn_llmprof(const std::vector<std::string>& args, const std::string& log_path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    std::string bin = llmprof_binary();
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(bin.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_llmprof(int pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::string why_two_ranks_cannot_run() {
  const pid_t child = ::fork();
  if (child < 0) return std::string("fork() failed: ") + std::strerror(errno);
  if (child == 0) ::_exit(0);
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) {
    return "a forked child could not be waited for";
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::string("socket(AF_INET) failed: ") + std::strerror(errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // any free port
  std::string why;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1) != 0) {
    why = std::string("no TCP socket can listen on 127.0.0.1: ") + std::strerror(errno);
  }
  ::close(fd);
  return why;
}

}  // namespace llmprof::test
