// The progress display: one rewritten line on a TTY (step, loss, ms/step, tok/s, ETA), plain log
// lines about every 5% of the run otherwise. Runs between steps, never inside the timed region.
#pragma once

#include <cstdint>

namespace llmprof::train {

class Progress {
 public:
  Progress(int64_t max_steps, bool quiet);
  // step counts from 1 (the step just completed), as in every output.
  void step(int64_t step, double loss, double step_ms, double tokens_per_s);
  void eval(int64_t step, double train_loss, double val_loss, double eval_ms);
  void finish();  // ends the TTY line

 private:
  int64_t max_steps_;
  bool quiet_;
  bool tty_;
  int64_t start_ns_;
  int64_t last_draw_ns_ = 0;
  bool line_open_ = false;
};

}  // namespace llmprof::train
