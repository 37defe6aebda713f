// A batch loader with num_workers background threads and a bounded prefetch queue of
// preallocated slots. A BatchSampler fills batch i deterministically from i (each row from an rng
// seeded by (seed, the row's global sample index)), so the batch sequence is the same whatever
// num_workers is: workers change speed, never the loss trajectory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace llmprof::data {

// Shapes of one batch; every buffer is row-major int64.
struct BatchLayout {
  int64_t batch_size = 0;  // B
  int64_t block_size = 0;  // T: x is (B, T)
  int64_t y_cols = 0;      // y is (B, y_cols): T next-token targets, P MLM labels, 1 class label
  bool has_mask = false;   // mask (B, T): 1 = real token, 0 = padding
  int64_t pos_cols = 0;    // MLM: pos (B, P) positions of the predicted tokens; 0 = no pos
};

// Where a sampler writes one batch; mask/pos are null when the layout has none.
struct BatchBuffers {
  int64_t* x = nullptr;
  int64_t* y = nullptr;
  int64_t* mask = nullptr;
  int64_t* pos = nullptr;
};

// Which slice of the sample stream one rank of a data-parallel run takes. Micro-batch i of the
// run is a global batch of world_size x B rows; rank r holds rows [r*B, (r+1)*B) of it, so row b
// of a rank's batch i is global sample (i * world_size + r) * B + b. One rank with batch
// world_size x B therefore sees exactly the rows of world_size ranks with batch B, concatenated
// in rank order; every per-sample random draw (window start, sequence pick, MLM mask) comes from
// an rng seeded by that global index, so it is the same whoever draws it.
struct Shard {
  int64_t rank = 0;
  int64_t world_size = 1;
};

// The global sample index of row b of a rank's batch i (the mapping above).
inline int64_t global_sample_index(const Shard& shard, int64_t batch_size, int64_t batch,
                                   int64_t row) {
  return (batch * shard.world_size + shard.rank) * batch_size + row;
}

// Produces batch i of a deterministic sequence. fill() is called concurrently from several
// worker threads, so it must be const and keep no mutable state.
class BatchSampler {
 public:
  virtual ~BatchSampler() = default;
  virtual BatchLayout layout() const = 0;
  virtual void fill(int64_t index, const BatchBuffers& out) const = 0;
};

// nanoGPT's random windows of a token stream: the window start of each row uniform in
// [0, size - T - 1] (as dataset.h sample_batch) from an rng seeded by (seed, its global sample
// index). tokens must outlive the sampler. Throws DataError when no window of T + 1 tokens fits
// or the shard is not 0 <= rank < world_size.
std::unique_ptr<BatchSampler> make_window_sampler(const std::vector<int32_t>& tokens,
                                                  int64_t batch_size, int64_t block_size,
                                                  uint64_t seed, Shard shard = {});

// A filled batch, valid until release(). x is (B, T), y (B, y_cols), mask (B, T) or null, pos
// (B, P) or null, all row-major int64.
struct BatchView {
  const int64_t* x = nullptr;
  const int64_t* y = nullptr;
  const int64_t* mask = nullptr;
  const int64_t* pos = nullptr;
  BatchLayout layout;
  int64_t batch_size = 0;
  int64_t block_size = 0;
  int64_t index = 0;  // position in the batch sequence (0, 1, 2, ...)
  int64_t slot = 0;   // internal slot id, for release()
};

// Where the slots' buffers live and when a slot may be refilled. The default is pageable host
// memory, refillable once released. The CUDA loop pins the buffers (page-locked, so copies to
// the device run asynchronously) and fences each slot: after release() the device may still be
// copying out of it, so a refill first waits for that copy (src/device/context_torch.cpp).
class SlotMemory {
 public:
  virtual ~SlotMemory() = default;
  // count int64 values, zeroed. Called from the loader's constructor. Throws on failure.
  virtual int64_t* allocate(size_t count) = 0;
  virtual void deallocate(int64_t* buffer) noexcept = 0;
  // The consumer handed slot back (its thread, inside release()).
  virtual void released(int64_t slot) = 0;
  // Before slot is filled again (a worker thread, or the consumer in next() without workers).
  virtual void before_fill(int64_t slot) = 0;
};

class BatchLoader {
 public:
  // sampler must outlive the loader. num_workers 0 samples inside next(); prefetch >= 1 slots
  // (the queue depth) are allocated up front, plus one held by the consumer. memory (which must
  // outlive the loader) holds the slots' buffers; null = pageable host memory. The sequence
  // starts at batch first_batch (a resumed run: the batches its first steps took are skipped).
  BatchLoader(const BatchSampler& sampler, int64_t num_workers, int64_t prefetch,
              SlotMemory* memory = nullptr, int64_t first_batch = 0);
  // The window sampler over tokens (which must outlive the loader).
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
  int64_t num_slots() const { return static_cast<int64_t>(slots_.size()); }

 private:
  struct Slot;
  void start(int64_t num_workers, int64_t prefetch);  // allocates the slots, starts the workers
  void worker_loop();
  void fill(Slot& slot, int64_t index);
  void free_slots() noexcept;

  std::unique_ptr<BatchSampler> owned_sampler_;  // the window sampler of the tokens constructor
  const BatchSampler* sampler_;
  SlotMemory* memory_;            // never null: the default_memory_ or the caller's
  std::unique_ptr<SlotMemory> default_memory_;
  BatchLayout layout_;            // sampler_->layout(), read once
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
