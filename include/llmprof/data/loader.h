// A batch loader with num_workers background threads and a bounded prefetch queue of
// preallocated slots. Batch i is always sampled with an rng seeded from (seed, i), so the batch
// sequence is the same whatever num_workers is: workers change speed, never the loss trajectory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace llmprof::data {

// A filled batch, valid until release(). x and y are (B, T) row-major int64.
struct BatchView {
  const int64_t* x = nullptr;
  const int64_t* y = nullptr;
  int64_t batch_size = 0;
  int64_t block_size = 0;
  int64_t index = 0;  // position in the batch sequence (0, 1, 2, ...)
  int64_t slot = 0;   // internal slot id, for release()
};

class BatchLoader {
 public:
  // tokens must outlive the loader. num_workers 0 samples inside next(); prefetch >= 1 slots
  // (the queue depth) are allocated up front, plus one held by the consumer.
  BatchLoader(const std::vector<int32_t>& tokens,
              int64_t batch_size,
              int64_t block_size,
              int64_t num_workers,
              int64_t prefetch,
              uint64_t seed);
  ~BatchLoader();  // stops and joins the workers
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // The next batch in sequence; blocks until it is ready. The step's data phase is this wait.
  BatchView next();
  // Hands the slot of a batch back for refilling. Batches must be released in order.
  void release(const BatchView& batch);

  int64_t num_workers() const { return static_cast<int64_t>(workers_.size()); }

 private:
  struct Slot;
  void worker_loop();
  void fill(Slot& slot, int64_t index);

  const std::vector<int32_t>& tokens_;
  int64_t batch_size_;
  int64_t block_size_;
  uint64_t seed_;
  std::vector<Slot*> slots_;      // ring of prefetch + 1 slots, owned
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;        // workers wait here for a free slot (or stop_)
  std::condition_variable ready_cv_;  // next() waits here for its batch to be filled
  int64_t next_to_fill_ = 0;      // next batch index a worker claims
  int64_t next_to_consume_ = 0;   // next batch index next() returns
  int64_t released_ = 0;          // batches released by the consumer
  bool stop_ = false;
};

}  // namespace llmprof::data
