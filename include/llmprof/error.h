// llmprof error types. The library throws these; only main() catches, prints one line and maps
// them to exit codes: 2 for bad input (usage, config, data), 1 for runtime failures, 130 for a stop
// by SIGINT/SIGTERM.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace llmprof {

// Exit codes of the llmprof executable.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as a shell reports Ctrl-C

// Base of every llmprof error; exit_code() says how main() should exit.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int exit_code = kExitRuntime)
      : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Bad command line: unknown flag, malformed --set, missing argument.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what, kExitUsage) {}
};

// Bad configuration. Carries where it came from: file (may be empty for --set), line and column
// (1-based, 0 when unknown) and the dotted key path (may be empty for whole-file errors).
class ConfigError : public Error {
 public:
  ConfigError(const std::string& what,
              std::string file = {},
              std::string key = {},
              int64_t line = 0,
              int64_t column = 0)
      : Error(what, kExitUsage),
        file_(std::move(file)),
        key_(std::move(key)),
        line_(line),
        column_(column) {}
  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }
  int64_t line() const { return line_; }
  int64_t column() const { return column_; }

 private:
  std::string file_;
  std::string key_;
  int64_t line_;
  int64_t column_;
};

// Bad input data: a corpus, vocabulary or dataset file that is missing or malformed.
class DataError : public Error {
 public:
  explicit DataError(const std::string& what) : Error(what, kExitUsage) {}
};

// A filesystem operation failed at run time (disk full, permission, rename).
class IoError : public Error {
 public:
  explicit IoError(const std::string& what) : Error(what, kExitRuntime) {}
};

// Stopped by SIGINT/SIGTERM before there was a run to finish (during set-up).
class Interrupted : public Error {
 public:
  explicit Interrupted(const std::string& what) : Error(what, kExitInterrupted) {}
};

}  // namespace llmprof
