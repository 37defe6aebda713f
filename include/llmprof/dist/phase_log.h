// The timed step's phase spans of a data-parallel rank (data, forward, backward, optimizer start
// and end, raw now_ns()), in fixed slots: two clock reads and two stores per span, no allocation,
// lock or I/O. The loop copies them out after the step (rundir/comm_tables.h phases.csv) and
// clears the log; spans beyond kMaxSpans in one step are counted as dropped.
#pragma once

#include <array>
#include <cstdint>

#include "llmprof/base/clock.h"
#include "llmprof/rundir/comm_tables.h"

namespace llmprof::dist {

class PhaseLog {
 public:
  static constexpr int kMaxSpans = 64;
  struct Span {
    int64_t start_ns = 0, end_ns = 0;
    rundir::SpanPhase phase = rundir::SpanPhase::kData;
  };

  void begin(rundir::SpanPhase phase) {
    if (used_ >= kMaxSpans) return;
    spans_[used_].phase = phase;
    spans_[used_].start_ns = now_ns();
  }
  void end() {
    if (used_ >= kMaxSpans) {
      ++dropped_;
      return;
    }
    spans_[used_++].end_ns = now_ns();
  }
  int size() const { return used_; }
  const Span& operator[](int i) const { return spans_[static_cast<size_t>(i)]; }
  void clear() { used_ = 0; }
  int64_t dropped() const { return dropped_; }

 private:
  std::array<Span, kMaxSpans> spans_{};
  int used_ = 0;
  int64_t dropped_ = 0;
};

// Logs one span for its scope; a null log does nothing (a single-process run).
class ScopedSpan {
 public:
  ScopedSpan(PhaseLog* log, rundir::SpanPhase phase) : log_(log) {
    if (log_ != nullptr) log_->begin(phase);
  }
  ~ScopedSpan() {
    if (log_ != nullptr) log_->end();
  }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  PhaseLog* log_;
};

}  // namespace llmprof::dist
