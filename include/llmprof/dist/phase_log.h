// The timed step's phase spans of a data-parallel rank (the step phases of profile::Phase: data,
// forward, backward, optimizer; start and end, raw now_ns()), in fixed slots: two clock reads and
// two stores per span, no allocation, lock or I/O. DataParallel fills it from the step's phase
// hooks and copies it out after the step (rundir/comm_tables.h phases.csv), then clears it; spans
// beyond kMaxSpans in one step are counted as dropped.
#pragma once

#include <array>
#include <cstdint>

#include "llmprof/base/clock.h"
#include "llmprof/profile/phase.h"

namespace llmprof::dist {

class PhaseLog {
 public:
  static constexpr int kMaxSpans = 64;
  struct Span {
    int64_t start_ns = 0, end_ns = 0;
    profile::Phase phase = profile::Phase::kData;
  };

  void begin(profile::Phase phase) {
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

}  // namespace llmprof::dist
