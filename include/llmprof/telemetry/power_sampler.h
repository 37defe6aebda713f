// The sampling thread: every 1/sample_hz it reads every source into the next SampleRing frame,
// stamped with llmprof::now_ns() taken just before the reads. Deadlines are absolute (no drift);
// a late sampler skips missed ticks rather than bursting. It measures its own CPU time with
// CLOCK_THREAD_CPUTIME_ID, plus the two synchronous frames start() and stop() take on the
// caller's thread. Nothing here runs on the training thread between start() and stop().
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "llmprof/telemetry/energy_source.h"
#include "llmprof/telemetry/sample_ring.h"

namespace llmprof::telemetry {

class PowerSampler {
 public:
  // sources are not owned and must be available; capacity_frames bounds the ring.
  PowerSampler(std::vector<EnergySource*> sources, int64_t sample_hz, size_t capacity_frames);
  // Stops the thread if still running.
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  // Starts the sources, takes the first frame synchronously, launches the thread.
  void start();
  // Wakes and joins the thread, takes a final frame, stops the sources. Idempotent.
  void stop();

  const SampleRing& ring() const { return ring_; }
  // Offset of a source's first channel within a frame.
  size_t channel_offset(size_t source_index) const { return offsets_[source_index]; }
  int64_t sample_hz() const { return sample_hz_; }
  // CPU time spent sampling so far (thread + synchronous frames), in nanoseconds.
  int64_t cpu_ns() const { return cpu_ns_.load(std::memory_order_relaxed); }
  // Wall time from start() to stop() (or to now while running), in nanoseconds.
  int64_t wall_ns() const;
  // Ticks skipped because a frame took longer than the period.
  int64_t missed_ticks() const { return missed_ticks_.load(std::memory_order_relaxed); }
  // True once the ring filled and recording stopped (a warning was logged).
  bool ring_full() const { return ring_full_.load(std::memory_order_relaxed); }
  bool running() const { return thread_.joinable(); }

 private:
  // Reads every source into a new frame; false (and a one-time warning) when the ring is full.
  bool take_frame();
  void run();

  std::vector<EnergySource*> sources_;
  std::vector<size_t> offsets_;
  int64_t sample_hz_;
  int64_t period_ns_;
  SampleRing ring_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;  // guarded by mutex_
  bool started_ = false;
  bool stopped_ = false;
  int64_t start_ns_ = 0;
  int64_t stop_ns_ = 0;
  std::atomic<int64_t> cpu_ns_{0};
  std::atomic<int64_t> missed_ticks_{0};
  std::atomic<bool> ring_full_{false};
};

// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
int64_t thread_cpu_ns();

}  // namespace llmprof::telemetry
