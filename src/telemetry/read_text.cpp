#include "read_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace llmprof::telemetry::detail {

int64_t read_text(const char* path, char* buf, size_t cap) {
  if (cap == 0) return -EINVAL;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t len = 0;
  while (len + 1 < cap) {
    ssize_t got = ::read(fd, buf + len, cap - 1 - len);
    if (got < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return -err;
    }
    if (got == 0) break;
    len += static_cast<size_t>(got);
  }
  ::close(fd);
  buf[len] = '\0';
  return static_cast<int64_t>(len);
}

std::optional<uint64_t> parse_u64(const char* text) {
  while (*text == ' ' || *text == '\t') ++text;
  if (*text < '0' || *text > '9') return std::nullopt;
  uint64_t v = 0;
  for (; *text >= '0' && *text <= '9'; ++text) v = v * 10 + static_cast<uint64_t>(*text - '0');
  return v;
}

std::string read_error(const std::string& path, int err) {
  std::string msg = path + ": " + std::strerror(err);
  if (err == EACCES || err == EPERM) msg += " (needs root or a udev rule)";
  return msg;
}

std::optional<std::string> read_trimmed(const std::string& path, int* err) {
  char buf[4096];
  int64_t n = read_text(path.c_str(), buf, sizeof(buf));
  if (n < 0) {
    *err = static_cast<int>(-n);
    return std::nullopt;
  }
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

}  // namespace llmprof::telemetry::detail
