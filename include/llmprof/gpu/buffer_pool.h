// A fixed pool of activity buffers for CUPTI's activity API: N buffers of 4 MiB, allocated once
// up front, 8-byte aligned (CUPTI's ACTIVITY_RECORD_ALIGNMENT). CUPTI asks for a buffer when it
// needs one (bufferRequested) and hands it back full (bufferCompleted); the pool never grows:
// when every buffer is out it answers with no buffer (CUPTI then drops records) and counts the
// refusal, to be warned about after the window, not in the callback (Kineto caps its buffers the
// same way). Completed buffers wait in a queue to be parsed off the hot path, then are released
// for reuse. The CUPTI callbacks are thin wrappers (cupti_source.cpp); this class needs no CUPTI.
//
// Thread safety: CUPTI calls request/complete from any thread (a launching thread when its
// buffer fills, CUPTI's worker thread, or a flush); one short mutex guards the lists. Nothing
// here allocates after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llmprof::gpu {

struct CompletedBuffer {
  uint8_t* data = nullptr;
  size_t valid_bytes = 0;  // bytes of records CUPTI wrote
};

class ActivityBufferPool {
 public:
  static constexpr size_t kDefaultBufferBytes = size_t{4} << 20;
  static constexpr size_t kAlignment = 8;

  // Allocates num_buffers x buffer_bytes (rounded up to a multiple of 8). Throws
  // std::invalid_argument when either is 0.
  explicit ActivityBufferPool(size_t num_buffers, size_t buffer_bytes = kDefaultBufferBytes);
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

  // bufferRequested: a free buffer and *size = its bytes; when none is free, nullptr and
  // *size = 0, counted in dropped_requests().
  uint8_t* request(size_t* size);
  // bufferCompleted: queues the buffer for parsing. A pointer that is not one of the pool's
  // handed-out buffers is ignored and counted in foreign_buffers().
  void complete(uint8_t* buffer, size_t valid_bytes);
  // Moves the queued buffers to out (appended, oldest first). Reserve num_buffers() in out and
  // this allocates nothing.
  void take_completed(std::vector<CompletedBuffer>& out);
  // Returns a parsed buffer to the free list.
  void release(uint8_t* buffer);

  size_t num_buffers() const { return num_buffers_; }
  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t free_buffers() const;
  size_t queued_buffers() const;
  int64_t dropped_requests() const;
  int64_t foreign_buffers() const;
  // The warning to log after the window, or empty when no request was refused.
  std::string drop_warning() const;

 private:
  enum class State : uint8_t { kFree, kOut, kQueued, kParsing };
  // Index of a pool buffer, or -1 when p is not the start of one.
  int64_t index_of(const uint8_t* p) const;

  size_t num_buffers_;
  size_t buffer_bytes_;
  std::unique_ptr<uint64_t[]> storage_;  // uint64_t: 8-byte alignment
  std::vector<uint8_t*> free_;           // stack, capacity num_buffers_
  std::vector<CompletedBuffer> queued_;  // FIFO, capacity num_buffers_
  std::vector<State> state_;
  int64_t dropped_requests_ = 0;
  int64_t foreign_buffers_ = 0;
  mutable std::mutex mutex_;
};

}  // namespace llmprof::gpu
