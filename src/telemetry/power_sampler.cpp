#include "llmprof/telemetry/power_sampler.h"

#include <spdlog/spdlog.h>
#include <time.h>

#include <chrono>
#include <utility>

#include "llmprof/base/clock.h"

namespace llmprof::telemetry {

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {

size_t count_channels(const std::vector<EnergySource*>& sources) {
  size_t n = 0;
  for (const EnergySource* s : sources) n += s->channels().size();
  return n;
}

}  // namespace

PowerSampler::PowerSampler(std::vector<EnergySource*> sources,
                           int64_t sample_hz,
                           size_t capacity_frames)
    : sources_(std::move(sources)),
      sample_hz_(sample_hz > 0 ? sample_hz : 1),
      period_ns_(1000000000 / sample_hz_),
      ring_(capacity_frames, count_channels(sources_)) {
  size_t offset = 0;
  for (const EnergySource* s : sources_) {
    offsets_.push_back(offset);
    offset += s->channels().size();
  }
}

PowerSampler::~PowerSampler() { stop(); }

bool PowerSampler::take_frame() {
  Reading* frame = ring_.begin_frame();
  if (frame == nullptr) {
    if (!ring_full_.exchange(true)) {
      spdlog::warn(
          "energy: sample buffer full ({} frames = {:.0f} s at {} Hz); recording stopped, "
          "later intervals have no energy",
          ring_.capacity(), static_cast<double>(ring_.capacity()) / sample_hz_, sample_hz_);
    }
    return false;
  }
  // One stamp per frame, the one the sources are given (the estimate integrates with it); each
  // read lands within the reads' duration after it (RAPL ~10 us per file, NVML ~1 ms per GPU).
  const int64_t t_ns = now_ns();
  for (size_t i = 0; i < sources_.size(); ++i) sources_[i]->sample(t_ns, frame + offsets_[i]);
  ring_.commit_frame(t_ns);
  return true;
}

void PowerSampler::start() {
  if (started_) return;
  started_ = true;
  const int64_t cpu0 = thread_cpu_ns();
  start_ns_ = now_ns();
  for (EnergySource* s : sources_) s->start(start_ns_);
  take_frame();
  cpu_ns_.fetch_add(thread_cpu_ns() - cpu0, std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
}

void PowerSampler::run() {
  const int64_t cpu0 = thread_cpu_ns();
  int64_t last_cpu = cpu0;
  int64_t next_ns = start_ns_ + period_ns_;
  bool recording = true;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      auto stop_requested = [this] { return stop_requested_; };
      if (!recording) {  // the ring is full: sleep until stop() rather than spin
        wake_.wait(lock, stop_requested);
        break;
      }
      const auto deadline =
          std::chrono::steady_clock::time_point(std::chrono::nanoseconds(next_ns));
      if (wake_.wait_until(lock, deadline, stop_requested)) break;
    }
    recording = take_frame();
    const int64_t now = now_ns();
    next_ns += period_ns_;
    if (next_ns <= now) {  // a slow read: skip the ticks already missed
      const int64_t missed = (now - next_ns) / period_ns_ + 1;
      missed_ticks_.fetch_add(missed, std::memory_order_relaxed);
      next_ns += missed * period_ns_;
    }
    const int64_t cpu = thread_cpu_ns();
    cpu_ns_.fetch_add(cpu - last_cpu, std::memory_order_relaxed);
    last_cpu = cpu;
  }
  cpu_ns_.fetch_add(thread_cpu_ns() - last_cpu, std::memory_order_relaxed);
}

void PowerSampler::stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  const int64_t cpu0 = thread_cpu_ns();
  take_frame();  // the final frame closes every interval that ended before stop()
  for (EnergySource* s : sources_) s->stop();
  stop_ns_ = now_ns();
  cpu_ns_.fetch_add(thread_cpu_ns() - cpu0, std::memory_order_relaxed);
}

int64_t PowerSampler::wall_ns() const {
  if (!started_) return 0;
  return (stopped_ ? stop_ns_ : now_ns()) - start_ns_;
}

}  // namespace llmprof::telemetry
