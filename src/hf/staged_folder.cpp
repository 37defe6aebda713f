// StagedFolder: mkdtemp beside the destination, a no-replace rename, and a signal flag.
#include "llmprof/hf/staged_folder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "llmprof/error.h"

namespace fs = std::filesystem;

namespace llmprof::hf {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
struct sigaction g_old_int {
}, g_old_term{};
int g_live = 0;  // StagedFolders alive: the handlers go back when the last one ends

extern "C" void on_staged_folder_stop_signal(int sig) { g_stop_signal = sig; }

void install_handlers() {
  if (g_live++ > 0) return;
  g_stop_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_staged_folder_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

void restore_handlers() {
  if (--g_live > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

// rename(from, to) that fails with EEXIST when to exists (Linux renameat2 RENAME_NOREPLACE); where
// the file system cannot, a check then a rename.
int rename_no_replace(const std::string& from, const std::string& to) {
#ifdef SYS_renameat2
  constexpr unsigned kRenameNoReplace = 1;  // linux/fs.h RENAME_NOREPLACE
  if (::syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), kRenameNoReplace) ==
      0) {
    return 0;
  }
  if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
  std::error_code ec;
  if (fs::exists(to, ec)) {
    errno = EEXIST;
    return -1;
  }
  return std::rename(from.c_str(), to.c_str());
}

}  // namespace

StagedFolder::StagedFolder(const std::string& out) : out_(out) {
  std::error_code ec;
  if (fs::exists(out, ec) || fs::is_symlink(out, ec)) {
    throw ConfigError(fmt::format("--out: '{}' exists; results are never overwritten", out));
  }
  fs::path parent = fs::path(out).parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec)) {
    throw ConfigError(
        fmt::format("--out: '{}': the folder '{}' does not exist", out, parent.string()));
  }
  // The handlers go in before the folder exists: a signal can never find it unguarded.
  install_handlers();
  std::string pattern = out + ".tmp-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    const int err = errno;
    restore_handlers();
    throw IoError(
        fmt::format("--out: cannot create a folder beside '{}': {}", out, std::strerror(err)));
  }
  path_ = buf.data();
  // mkdtemp's folder is the owner's alone (0700); the result gets the usual 0777 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(path_.c_str(), 0777 & ~mask);
}

StagedFolder::~StagedFolder() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  restore_handlers();
}

void StagedFolder::check_interrupted() const {
  if (g_stop_signal != 0) {
    throw Interrupted(fmt::format("stopped by signal {} while writing '{}': nothing was written",
                                  static_cast<int>(g_stop_signal), out_));
  }
}

void StagedFolder::commit() {
  check_interrupted();
  if (rename_no_replace(path_, out_) != 0) {
    const int err = errno;
    if (err == EEXIST || err == ENOTEMPTY) {
      throw ConfigError(fmt::format(
          "--out: '{}' appeared while it was written; results are never overwritten", out_));
    }
    throw IoError(
        fmt::format("--out: cannot rename '{}' to '{}': {}", path_, out_, std::strerror(err)));
  }
  committed_ = true;
}

}  // namespace llmprof::hf
