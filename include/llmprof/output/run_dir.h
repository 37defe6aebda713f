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

// Writes content to temporary_path(path), fsyncs it, renames it over path and fsyncs the folder
// (a reader, or the disk after a crash, has the old file or the whole new one). Throws IoError
// naming the file and the system's reason (e.g. "No space left on device"), leaving no temporary.
void write_file_atomic(const std::string& path, const std::string& content);

// write_file_atomic for content in pieces, written one after another without joining them (a
// file header, then large buffers owned elsewhere, such as tensor data). Same guarantees.
void write_file_atomic_parts(const std::string& path, const std::vector<std::string_view>& parts);

// The temporary a whole file is written to before its rename: path + ".tmp". Readers ignore it;
// one left by a killed writer is replaced by the next write.
std::string temporary_path(const std::string& path);

// Writes all of data to fd, resuming after short writes and EINTR. 0, or the errno of the failure.
int write_all(int fd, std::string_view data);

// Ends a whole-file write: fsyncs and closes fd (open on tmp; taken over), renames tmp over path
// and fsyncs the folder. Throws IoError naming the step that failed, after removing tmp.
void commit_temporary(int fd, const std::string& tmp, const std::string& path);

}  // namespace llmprof::output
