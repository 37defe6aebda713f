// Logging through spdlog: one logger, "llmprof", to stderr and (once a run directory exists) to
// its log.txt. Messages are formatted only when their level is enabled.
#pragma once

#include <string>

namespace llmprof::output {

// Sets up the "llmprof" default logger on stderr; quiet shows warnings and errors only.
void init_logging(bool quiet);

// Adds <path> as a second sink taking every message at info and above. Throws IoError.
void add_log_file(const std::string& path);

// Removes the log.txt sink (end of a run), flushing it.
void remove_log_file();

}  // namespace llmprof::output
