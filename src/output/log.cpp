#include "llmprof/output/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>

#include "llmprof/error.h"

namespace llmprof::output {

namespace {
std::shared_ptr<spdlog::sinks::sink> g_file_sink;
}

void init_logging(bool quiet) {
  auto stderr_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  stderr_sink->set_level(quiet ? spdlog::level::warn : spdlog::level::info);
  stderr_sink->set_pattern("[%H:%M:%S] %^%l%$ %v");
  auto logger = std::make_shared<spdlog::logger>("llmprof", stderr_sink);
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  // A sink that cannot write (log.txt on a full disk) must not stop the run nor flood the
  // terminal: one line says so, and the results' own writes report the disk.
  logger->set_error_handler([](const std::string& message) {
    static std::atomic<bool> told{false};
    if (told.exchange(true)) return;
    std::fprintf(stderr, "llmprof: warning: the log could not be written (%s); later log errors "
                 "are not shown\n", message.c_str());
  });
  spdlog::set_default_logger(logger);
}

void add_log_file(const std::string& path) {
  remove_log_file();
  try {
    g_file_sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false);
  } catch (const spdlog::spdlog_ex& e) {
    throw IoError("cannot open log file '" + path + "': " + e.what());
  }
  g_file_sink->set_level(spdlog::level::info);
  g_file_sink->set_pattern("[%Y-%m-%d %H:%M:%S.%e] %l %v");
  spdlog::default_logger()->sinks().push_back(g_file_sink);
}

void remove_log_file() {
  if (!g_file_sink) return;
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), g_file_sink), sinks.end());
  g_file_sink->flush();
  g_file_sink.reset();
}

}  // namespace llmprof::output
