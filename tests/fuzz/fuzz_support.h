// What the libFuzzer targets share: a scratch directory for readers that take a path, the
// vocabulary files, and checks whose failure aborts, which libFuzzer records as a crash together
// with the input that caused it.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace llmprof::fuzz {

// A property of the code under test does not hold.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "property failed: %s\n", what.c_str());
  std::abort();
}

// fail(what) unless ok. Takes a C string so that a passing check costs no allocation.
inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

// An error message fit for a terminal: no control byte, no byte past ASCII (printable() escapes
// them, as every message quoting input must), and not longer than a screen.
inline void check_readable(std::string_view message) {
  for (char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f) fail("an error message holds a raw byte: " + std::string(message));
  }
  if (message.size() > 2000)
    fail("an error message of " + std::to_string(message.size()) + " bytes");
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// This process's scratch directory under $TMPDIR (or /tmp), created on first use and removed at
// a normal exit (a crash leaves it for a look).
inline const std::string& scratch_dir() {
  // Never destroyed: the exit handler that removes the folder runs after static destructors.
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto* path = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/llmprof_fuzz_XXXXXX");
    if (!mkdtemp(path->data())) fail("cannot create a scratch directory in " + *path);
    std::atexit([] { std::error_code ec; std::filesystem::remove_all(scratch_dir(), ec); });
    return path;
  }();
  return *dir;
}

// Writes text to scratch_dir()/name (creating its folder) and returns the path.
inline std::string write_scratch(const std::string& name, std::string_view text) {
  const std::filesystem::path path = std::filesystem::path(scratch_dir()) / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) fail("cannot write " + path.string());
  return path.string();
}

// A vocabulary file: shared/data/<shared> ($LLMPROF_SHARED_DATA or the folder beside the
// checkout) when present, else the project's small test fixture <fixture> (a path from the
// source root), so the targets run without the shared data.
inline std::string vocab_file(const std::string& shared, const std::string& fixture) {
  const char* env = std::getenv("LLMPROF_SHARED_DATA");
  const std::string dir = env && *env ? env : LLMPROF_SHARED_DATA_DIR;
  const std::string path = dir + "/" + shared;
  if (std::filesystem::exists(path)) return path;
  return std::string(LLMPROF_SOURCE_DIR) + "/" + fixture;
}

}  // namespace llmprof::fuzz
