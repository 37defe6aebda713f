// Sweep progress on stderr: points done/total (failed and interrupted apart), the running point ids
// and an ETA from the mean point duration. On a TTY one status line is rewritten in place;
// otherwise each event is a plain spdlog line. Quiet shows only warnings (failed points). Private
// to src/sweep.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results.h"

namespace llmprof::sweep::detail {

class SweepProgress {
 public:
  SweepProgress(int64_t total, bool quiet);
  ~SweepProgress();
  SweepProgress(const SweepProgress&) = delete;
  SweepProgress& operator=(const SweepProgress&) = delete;

  // How much an event line matters: a note shows unless quiet; a point event (started, finished)
  // only off a TTY, where the status line says it; a warning always.
  enum class Kind { kNote, kPointEvent, kWarning };
  // Logs one event line, keeping the TTY status line below it.
  void event(const std::string& line, Kind kind);
  // Refreshes the TTY status line, at most every 250 ms unless forced; no-op elsewhere.
  void status(const PointCounts& counts,
              const std::vector<std::string>& running,
              std::optional<double> eta_s,
              bool force = false);
  // Clears the TTY status line.
  void finish();

 private:
  void clear_line();
  int64_t total_;
  bool quiet_;
  bool tty_;
  bool line_shown_ = false;
  std::string last_line_;
  std::chrono::steady_clock::time_point last_draw_{};
};

// "1h02m", "3m05s", "12s", "?" for unknown.
std::string format_eta(std::optional<double> seconds);

// "4/9 done, 1 failed; running p004-..., p005-...; ETA 12s": done counts completed and diverged
// points only; failed and interrupted ones are shown apart. No ETA once every point has ended.
std::string progress_text(const PointCounts& counts,
                          int64_t total,
                          const std::vector<std::string>& running,
                          std::optional<double> eta_s);

}  // namespace llmprof::sweep::detail
