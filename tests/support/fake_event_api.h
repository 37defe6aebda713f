// A scripted stand-in for the CUDA event calls (gpu::EventApi), for the tests of what times
// through them: the phase event pool and step span (tests/gpu) and bench's call timer
// (tests/eval). Header only.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <utility>

#include "llmprof/gpu/event_pool.h"

namespace llmprof::test {

// Events are numbers; each record() stamps the event with the next scripted GPU time (ms), and
// elapsed_ms is the difference of two stamps. Counts every call.
class FakeEventApi : public gpu::EventApi {
 public:
  explicit FakeEventApi(std::deque<float> times) : times_(std::move(times)) {}

  Event create() override {
    ++created;
    return reinterpret_cast<Event>(static_cast<uintptr_t>(++next_id_));
  }
  void destroy(Event) noexcept override { ++destroyed; }
  void record(Event e) override {
    ++records;
    stamp_[e] = times_.empty() ? -1.0f : times_.front();
    if (!times_.empty()) times_.pop_front();
  }
  void synchronize(Event e) override {
    ++syncs;
    synced = e;
  }
  float elapsed_ms(Event start, Event end) override {
    ++elapsed_calls;
    return stamp_.at(end) - stamp_.at(start);
  }
  void script(std::deque<float> times) { times_ = std::move(times); }

  int created = 0, destroyed = 0, records = 0, syncs = 0, elapsed_calls = 0;
  Event synced = nullptr;
  static Event event(uintptr_t id) {
    return reinterpret_cast<Event>(id);
  }  // created in order 1, 2, ...

 private:
  std::deque<float> times_;
  std::map<Event, float> stamp_;
  uintptr_t next_id_ = 0;
};

}  // namespace llmprof::test
