// The run directory: created once, never overwritten silently; whole files are written to a
// temporary name and renamed so a reader never sees half a file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmprof::output {

// Creates <parent>/<name> (and parent). With an empty name, uses <base_name>-<YYYYmmdd-HHMMSS>,
// adding -2, -3, ... if taken. An explicit name that exists throws ConfigError naming
// output.name and the path (exit 2): results are never overwritten.
std::string create_run_dir(const std::string& parent,
                           const std::string& name,
                           const std::string& base_name);

// The local time now in strftime format, e.g. "%Y-%m-%dT%H:%M:%S%z" (ISO 8601 with offset).
std::string local_time_now(const char* format);

// Writes content to path + ".tmp", flushes and fsyncs it, renames it over path (a reader sees the
// old file or the whole new one). Throws IoError, leaving no .tmp behind.
void write_file_atomic(const std::string& path, const std::string& content);

// write_file_atomic for content in pieces, written one after another without joining them (a
// file header, then large buffers owned elsewhere, such as tensor data). Same guarantees.
void write_file_atomic_parts(const std::string& path, const std::vector<std::string_view>& parts);

}  // namespace llmprof::output
