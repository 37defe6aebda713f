#include "llmprof/output/run_dir.h"

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

void write_file_atomic_parts(const std::string& path, const std::vector<std::string_view>& parts) {
  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw IoError("cannot write '" + tmp + "': " + std::strerror(errno));
  bool ok = true;
  for (size_t i = 0; ok && i < parts.size(); ++i) {
    ok = parts[i].empty() || std::fwrite(parts[i].data(), 1, parts[i].size(), f) == parts[i].size();
  }
  // fsync before the rename: else a crash or power cut can leave `path` renamed but empty.
  ok = ok && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int write_errno = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    throw IoError("short write to '" + tmp + "': " + std::strerror(write_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(tmp.c_str());
    throw IoError("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(rename_errno));
  }
}

}  // namespace llmprof::output
