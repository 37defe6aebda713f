// Small-file reads for sysfs and procfs without allocation on the sampling path, and the error
// text a reason string quotes ("<path>: Permission denied"). Private to src/telemetry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace llmprof::telemetry::detail {

// Reads up to cap-1 bytes of path into buf (NUL-terminated); returns the length, or -errno.
// open/read/close only: safe on the sampler thread.
int64_t read_text(const char* path, char* buf, size_t cap);

// Parses the leading unsigned decimal of text (skipping blanks); nullopt if none.
std::optional<uint64_t> parse_u64(const char* text);

// "<path>: <strerror(err)>" with a hint for EACCES/EPERM ("needs root or a udev rule").
std::string read_error(const std::string& path, int err);

// Reads a whole small text file with trailing whitespace trimmed; nullopt and *err set on error.
std::optional<std::string> read_trimmed(const std::string& path, int* err);

}  // namespace llmprof::telemetry::detail
