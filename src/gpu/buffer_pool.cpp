// The fixed pool of CUPTI activity buffers (see buffer_pool.h).
#include "llmprof/gpu/buffer_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace llmprof::gpu {

ActivityBufferPool::ActivityBufferPool(size_t num_buffers, size_t buffer_bytes)
    : num_buffers_(num_buffers),
      buffer_bytes_((buffer_bytes + kAlignment - 1) / kAlignment * kAlignment) {
  if (num_buffers_ == 0 || buffer_bytes_ == 0) {
    throw std::invalid_argument(fmt::format(
        "[ActivityBufferPool] needs at least one buffer of at least 8 bytes, got {} x {} bytes",
        num_buffers, buffer_bytes));
  }
  // Default-initialised: the pages are committed as CUPTI writes them.
  storage_.reset(new uint64_t[num_buffers_ * buffer_bytes_ / sizeof(uint64_t)]);
  auto* base = reinterpret_cast<uint8_t*>(storage_.get());
  free_.reserve(num_buffers_);
  queued_.reserve(num_buffers_);
  state_.assign(num_buffers_, State::kFree);
  // Pushed in reverse so the first request gets buffer 0.
  for (size_t i = num_buffers_; i-- > 0;) free_.push_back(base + i * buffer_bytes_);
}

int64_t ActivityBufferPool::index_of(const uint8_t* p) const {
  const auto* base = reinterpret_cast<const uint8_t*>(storage_.get());
  if (p < base || p >= base + num_buffers_ * buffer_bytes_) return -1;
  const auto offset = static_cast<size_t>(p - base);
  return offset % buffer_bytes_ == 0 ? static_cast<int64_t>(offset / buffer_bytes_) : -1;
}

uint8_t* ActivityBufferPool::request(size_t* size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) {
    ++dropped_requests_;
    *size = 0;
    return nullptr;
  }
  uint8_t* b = free_.back();
  free_.pop_back();
  state_[static_cast<size_t>(index_of(b))] = State::kOut;
  *size = buffer_bytes_;
  return b;
}

void ActivityBufferPool::complete(uint8_t* buffer, size_t valid_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t i = index_of(buffer);
  if (i < 0 || state_[static_cast<size_t>(i)] != State::kOut) {
    ++foreign_buffers_;
    return;
  }
  state_[static_cast<size_t>(i)] = State::kQueued;
  queued_.push_back({buffer, std::min(valid_bytes, buffer_bytes_)});
}

void ActivityBufferPool::take_completed(std::vector<CompletedBuffer>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const CompletedBuffer& b : queued_) {
    state_[static_cast<size_t>(index_of(b.data))] = State::kParsing;
    out.push_back(b);
  }
  queued_.clear();
}

void ActivityBufferPool::release(uint8_t* buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t i = index_of(buffer);
  if (i < 0 || state_[static_cast<size_t>(i)] != State::kParsing) {
    ++foreign_buffers_;
    return;
  }
  state_[static_cast<size_t>(i)] = State::kFree;
  free_.push_back(buffer);
}

size_t ActivityBufferPool::free_buffers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

size_t ActivityBufferPool::queued_buffers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_.size();
}

int64_t ActivityBufferPool::dropped_requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_requests_;
}

int64_t ActivityBufferPool::foreign_buffers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return foreign_buffers_;
}

std::string ActivityBufferPool::drop_warning() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (dropped_requests_ == 0) return {};
  return fmt::format(
      "cupti: {} activity buffer request(s) refused: all {} buffers of {} MiB were in use, so "
      "CUPTI dropped records; GPU tables of this window are incomplete (parse more often or raise "
      "the buffer count)",
      dropped_requests_, num_buffers_, static_cast<double>(buffer_bytes_) / (1 << 20));
}

}  // namespace llmprof::gpu
