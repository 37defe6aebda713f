#include "progress.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace llmprof::sweep::detail {

std::string format_eta(std::optional<double> seconds) {
  if (!seconds || !std::isfinite(*seconds)) return "?";
  auto s = static_cast<int64_t>(std::llround(std::max(0.0, *seconds)));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string progress_text(const PointCounts& counts,
                          int64_t total,
                          const std::vector<std::string>& running,
                          std::optional<double> eta_s) {
  std::string text = fmt::format("{}/{} done", counts.done(), total);
  if (counts.failed > 0) text += fmt::format(", {} failed", counts.failed);
  if (counts.interrupted > 0) text += fmt::format(", {} interrupted", counts.interrupted);
  if (!running.empty()) text += fmt::format("; running {}", fmt::join(running, ", "));
  if (counts.ended() < total) text += "; ETA " + format_eta(eta_s);
  return text;
}

SweepProgress::SweepProgress(int64_t total, bool quiet)
    : total_(total), quiet_(quiet), tty_(::isatty(STDERR_FILENO) == 1) {}

SweepProgress::~SweepProgress() { finish(); }

void SweepProgress::clear_line() {
  if (!line_shown_) return;
  std::fputs("\r\033[K", stderr);
  line_shown_ = false;
}

void SweepProgress::event(const std::string& line, Kind kind) {
  const bool warn = kind == Kind::kWarning;
  if ((quiet_ && !warn) || (tty_ && kind == Kind::kPointEvent)) return;
  clear_line();
  if (warn) {
    spdlog::warn("sweep: {}", line);
  } else {
    spdlog::info("sweep: {}", line);
  }
  if (tty_ && !quiet_ && !last_line_.empty()) {  // put the status line back under the event
    std::fputs(last_line_.c_str(), stderr);
    std::fflush(stderr);
    line_shown_ = true;
  }
}

void SweepProgress::status(const PointCounts& counts,
                           const std::vector<std::string>& running,
                           std::optional<double> eta_s,
                           bool force) {
  if (quiet_ || !tty_) return;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  last_line_ = "sweep " + progress_text(counts, total_, running, eta_s);
  const size_t kMaxWidth = 160;  // keep it on one terminal line
  if (last_line_.size() > kMaxWidth) last_line_ = last_line_.substr(0, kMaxWidth - 3) + "...";
  std::fputs("\r\033[K", stderr);
  std::fputs(last_line_.c_str(), stderr);
  std::fflush(stderr);
  line_shown_ = true;
}

void SweepProgress::finish() {
  clear_line();
  last_line_.clear();
  std::fflush(stderr);
}

}  // namespace llmprof::sweep::detail
