// The sampler's fixed store: capacity frames, each one timestamp and one Reading per channel,
// allocated once (uninitialised, so the OS commits pages only as frames are written). One writer
// (the sampler thread) appends; readers see frames [0, size()) through an acquire load, so a
// reader never waits on the sampler and never sees a half-written frame. Full means full: the
// writer stops, nothing grows.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "llmprof/telemetry/energy_integrate.h"
#include "llmprof/telemetry/energy_source.h"

namespace llmprof::telemetry {

class SampleRing {
 public:
  // Bytes per frame: 8 + 48 x num_channels.
  SampleRing(size_t capacity_frames, size_t num_channels)
      : capacity_(capacity_frames),
        channels_(num_channels),
        t_ns_(new int64_t[capacity_frames]),
        readings_(new Reading[capacity_frames * num_channels]) {}
  SampleRing(const SampleRing&) = delete;
  SampleRing& operator=(const SampleRing&) = delete;

  // Writer: the next frame's readings, reset to kEmptyReading; nullptr when full.
  Reading* begin_frame() {
    const size_t n = size_.load(std::memory_order_relaxed);
    if (n >= capacity_) return nullptr;
    Reading* r = &readings_[n * channels_];
    for (size_t c = 0; c < channels_; ++c) r[c] = kEmptyReading;
    return r;
  }
  // Writer: publishes the frame begun last, stamped t_ns.
  void commit_frame(int64_t t_ns) {
    const size_t n = size_.load(std::memory_order_relaxed);
    t_ns_[n] = t_ns;
    size_.store(n + 1, std::memory_order_release);
  }

  // Published frames.
  size_t size() const { return size_.load(std::memory_order_acquire); }
  size_t capacity() const { return capacity_; }
  size_t num_channels() const { return channels_; }
  bool full() const { return size() >= capacity_; }
  int64_t t_ns(size_t frame) const { return t_ns_[frame]; }
  const Reading& at(size_t frame, size_t channel) const {
    return readings_[frame * channels_ + channel];
  }
  // One channel's field over the first frames frames, e.g. trace(0, &Reading::power_w, size()).
  TraceView trace(size_t channel, double Reading::*field, size_t frames) const {
    static_assert(sizeof(Reading) % sizeof(double) == 0, "Reading must be all doubles");
    TraceView v;
    v.t_ns = t_ns_.get();
    v.values = frames > 0 ? &(readings_[channel].*field) : nullptr;
    v.stride = channels_ * (sizeof(Reading) / sizeof(double));
    v.size = frames;
    return v;
  }

 private:
  size_t capacity_;
  size_t channels_;
  std::unique_ptr<int64_t[]> t_ns_;
  std::unique_ptr<Reading[]> readings_;
  std::atomic<size_t> size_{0};
};

}  // namespace llmprof::telemetry
