#include "progress.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "llmprof/base/clock.h"

namespace llmprof::train {

Progress::Progress(int64_t max_steps, bool quiet)
    : max_steps_(max_steps), quiet_(quiet), tty_(isatty(STDERR_FILENO) == 1),
      start_ns_(now_ns()) {}

void Progress::step(int64_t step, double loss, double step_ms, double tokens_per_s) {
  if (quiet_) return;
  const int64_t now = now_ns();
  const double elapsed_s = static_cast<double>(now - start_ns_) * 1e-9;
  const double eta_s = elapsed_s / static_cast<double>(step) * static_cast<double>(max_steps_ - step);
  if (tty_) {
    if (now - last_draw_ns_ < 100'000'000 && step < max_steps_) return;  // 10 Hz at most
    last_draw_ns_ = now;
    const std::string tok = tokens_per_s > 0 ? fmt::format(" | {:.0f} tok/s", tokens_per_s) : "";
    std::string line = fmt::format("\rstep {}/{} | loss {:.4f} | {:.1f} ms/step{} | ETA {:.0f}s   ",
                                   step, max_steps_, loss, step_ms, tok, eta_s);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    line_open_ = true;
    return;
  }
  const int64_t every = std::max<int64_t>(1, max_steps_ / 20);
  if (step % every == 0 || step == 1 || step == max_steps_) {
    // tokens_per_s <= 0: a loop that did not say its tokens (no figure rather than 0).
    const std::string tok = tokens_per_s > 0 ? fmt::format(" {:.0f} tok/s", tokens_per_s) : "";
    spdlog::info("step {}/{} loss {:.4f} {:.2f} ms/step{} ETA {:.0f}s", step, max_steps_, loss,
                 step_ms, tok, eta_s);
  }
}

void Progress::eval(int64_t step, double train_loss, double val_loss, double eval_ms) {
  if (line_open_) {
    std::fputs("\n", stderr);
    line_open_ = false;
  }
  std::string losses;  // only the splits evaluated (a user's loop may eval val alone)
  if (!std::isnan(train_loss)) losses += fmt::format("train loss {:.4f}", train_loss);
  if (!std::isnan(val_loss)) {
    losses += fmt::format("{}val loss {:.4f}", losses.empty() ? "" : ", ", val_loss);
  }
  spdlog::info("eval at step {}: {} ({:.0f} ms)", step, losses, eval_ms);
}

void Progress::finish() {
  if (line_open_) std::fputs("\n", stderr);
  line_open_ = false;
}

}  // namespace llmprof::train
