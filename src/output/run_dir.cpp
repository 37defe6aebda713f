#include "llmprof/output/run_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "llmprof/error.h"

namespace fs = std::filesystem;

namespace llmprof::output {

std::string local_time_now(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string create_run_dir(const std::string& parent,
                           const std::string& name,
                           const std::string& base_name) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    throw IoError("cannot create output directory '" + parent + "' (output.dir): " + ec.message());
  }
  if (!name.empty()) {
    if (name.find('/') != std::string::npos || name == "." || name == "..") {
      throw ConfigError("output.name: '" + name + "' must be a plain directory name", "",
                        "output.name");
    }
    fs::path p = fs::path(parent) / name;
    if (!fs::create_directory(p, ec)) {
      if (ec) throw IoError("cannot create run directory '" + p.string() + "': " + ec.message());
      throw ConfigError("run directory '" + p.string() +
                            "' already exists; results are never overwritten: pick another "
                            "output.name (--set output.name=...) or remove it",
                        "", "output.name");
    }
    return p.string();
  }
  std::string stem = base_name + "-" + local_time_now("%Y%m%d-%H%M%S");
  for (int i = 1; i < 1000; ++i) {
    fs::path p = fs::path(parent) / (i == 1 ? stem : stem + "-" + std::to_string(i));
    if (fs::create_directory(p, ec)) return p.string();
    if (ec) throw IoError("cannot create run directory '" + p.string() + "': " + ec.message());
  }
  throw IoError("cannot find a free run directory name for '" + stem + "' under " + parent);
}

void write_file_atomic(const std::string& path, const std::string& content) {
  write_file_atomic_parts(path, {std::string_view(content)});
}

std::string temporary_path(const std::string& path) { return path + ".tmp"; }

int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;  // 0 bytes for a non-empty write: no room
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

void commit_temporary(int fd, const std::string& tmp, const std::string& path) {
  // fsync before the rename: else a crash or power cut can leave `path` renamed but empty.
  const char* step = "fsync";
  int err = ::fsync(fd) == 0 ? 0 : errno;
  if (::close(fd) != 0 && err == 0) {  // NFS and some FUSE file systems report late errors here
    step = "close";
    err = errno;
  }
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(tmp.c_str());
    throw IoError("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(rename_errno));
  }
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw IoError(std::string("cannot write '") + tmp + "' (" + step + "): " + std::strerror(err));
  }
  // The rename itself reaches the disk with the folder's fsync; a folder that refuses it (some
  // file systems do) still holds the whole file, so that is no error.
  const fs::path parent = fs::path(path).parent_path();
  const int dir_fd =
      ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void write_file_atomic_parts(const std::string& path, const std::vector<std::string_view>& parts) {
  const std::string tmp = temporary_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot write '" + tmp + "': " + std::strerror(errno));
  int err = 0;
  for (size_t i = 0; err == 0 && i < parts.size(); ++i) err = write_all(fd, parts[i]);
  if (err != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError("cannot write '" + tmp + "': " + std::strerror(err));
  }
  commit_temporary(fd, tmp, path);
}

}  // namespace llmprof::output
