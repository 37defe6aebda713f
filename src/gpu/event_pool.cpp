// Slot logic of the CUDA-event phase timer (see event_pool.h).
#include "llmprof/gpu/event_pool.h"

#include <algorithm>

namespace llmprof::gpu {

PhaseEventPool::PhaseEventPool(EventApi& api, int max_intervals) : api_(api) {
  slots_.resize(static_cast<size_t>(std::max(0, max_intervals)));
  try {
    for (Slot& s : slots_) {
      s.begin = api_.create();
      s.end = api_.create();
    }
  } catch (...) {
    for (Slot& s : slots_) {
      if (s.begin != nullptr) api_.destroy(s.begin);
      if (s.end != nullptr) api_.destroy(s.end);
    }
    throw;
  }
}

PhaseEventPool::~PhaseEventPool() {
  for (Slot& s : slots_) {
    api_.destroy(s.begin);
    api_.destroy(s.end);
  }
}

void PhaseEventPool::begin_step() {
  used_ = 0;
  step_overflows_ = 0;
  last_recorded_ = nullptr;
}

int PhaseEventPool::begin(profile::Phase phase) {
  if (used_ >= static_cast<int>(slots_.size())) {
    ++step_overflows_;
    ++total_overflows_;
    return -1;
  }
  Slot& s = slots_[static_cast<size_t>(used_)];
  s.phase = phase;
  s.ended = false;
  api_.record(s.begin);
  last_recorded_ = s.begin;
  return used_++;
}

void PhaseEventPool::end(int slot) {
  if (slot < 0 || slot >= used_) return;
  Slot& s = slots_[static_cast<size_t>(slot)];
  api_.record(s.end);
  s.ended = true;
  last_recorded_ = s.end;
}

GpuPhaseTimes PhaseEventPool::resolve() {
  GpuPhaseTimes out;
  out.overflows = step_overflows_;
  if (used_ == 0) return out;
  // sync: the one host wait of the GPU timer, after the step. Events complete in stream order,
  // so once the last recorded one has, every earlier one has too.
  api_.synchronize(last_recorded_);
  const EventApi::Event origin = slots_[0].begin;
  out.intervals.reserve(static_cast<size_t>(used_));
  for (int i = 0; i < used_; ++i) {
    const Slot& s = slots_[static_cast<size_t>(i)];
    if (!s.ended) {
      ++out.unclosed;
      continue;
    }
    GpuPhaseInterval g;
    g.phase = s.phase;
    g.start_ms = i == 0 ? 0.0 : api_.elapsed_ms(origin, s.begin);
    g.duration_ms = api_.elapsed_ms(s.begin, s.end);
    auto& sum = out.phase_ms[static_cast<size_t>(s.phase)];
    sum = sum.value_or(0.0) + g.duration_ms;
    out.intervals.push_back(g);
  }
  return out;
}

StepEventSpan::StepEventSpan(EventApi& api) : api_(api) {
  begin_ = api_.create();
  try {
    end_ = api_.create();
  } catch (...) {
    api_.destroy(begin_);
    throw;
  }
}

StepEventSpan::~StepEventSpan() {
  api_.destroy(begin_);
  api_.destroy(end_);
}

void StepEventSpan::begin() {
  closed_ = false;
  api_.record(begin_);
}

void StepEventSpan::end() {
  api_.record(end_);
  closed_ = true;
}

std::optional<double> StepEventSpan::resolve() {
  if (!closed_) return std::nullopt;
  api_.synchronize(end_);  // sync: after the step, the end event's completion
  return api_.elapsed_ms(begin_, end_);
}

}  // namespace llmprof::gpu
