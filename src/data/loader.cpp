// BatchLoader: workers claim batch indices in order and fill ring slots; the consumer takes them
// in order. Slot s holds batches s, s + nslots, s + 2 nslots, ...; batch i may be filled once
// batch i - nslots has been released, i.e. while i < released_ + nslots. One mutex guards the
// bookkeeping; filling happens outside it.
#include "llmprof/data/loader.h"

#include <random>
#include <string>

#include "data/rng.h"
#include "llmprof/data/dataset.h"
#include "llmprof/error.h"

namespace llmprof::data {

struct BatchLoader::Slot {
  std::vector<int64_t> x;  // (B, T)
  std::vector<int64_t> y;  // (B, T)
  int64_t index = -1;      // the batch it holds, valid when ready
  bool ready = false;      // filled and not yet released
};

BatchLoader::BatchLoader(const std::vector<int32_t>& tokens,
                         int64_t batch_size,
                         int64_t block_size,
                         int64_t num_workers,
                         int64_t prefetch,
                         uint64_t seed)
    : tokens_(tokens), batch_size_(batch_size), block_size_(block_size), seed_(seed) {
  if (batch_size < 1 || block_size < 1 || num_workers < 0 || prefetch < 1) {
    throw DataError(
        "BatchLoader: need batch_size >= 1, block_size >= 1, num_workers >= 0, "
        "prefetch >= 1; got " +
        std::to_string(batch_size) + ", " + std::to_string(block_size) + ", " +
        std::to_string(num_workers) + ", " + std::to_string(prefetch));
  }
  if (static_cast<int64_t>(tokens.size()) < block_size + 1) {
    throw DataError("BatchLoader: " + std::to_string(tokens.size()) +
                    " tokens hold no window of block_size " + std::to_string(block_size) + " + 1");
  }
  const auto elems = static_cast<size_t>(batch_size * block_size);
  for (int64_t s = 0; s < prefetch + 1; ++s) {
    auto* slot = new Slot;
    slot->x.resize(elems);
    slot->y.resize(elems);
    slots_.push_back(slot);
  }
  workers_.reserve(static_cast<size_t>(num_workers));
  for (int64_t w = 0; w < num_workers; ++w) workers_.emplace_back([this] { worker_loop(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();  // a worker mid-fill finishes that batch, then sees stop_
  for (Slot* s : slots_) delete s;
}

void BatchLoader::fill(Slot& slot, int64_t index) {
  std::mt19937_64 rng(detail::batch_seed(seed_, index));
  sample_batch(tokens_, batch_size_, block_size_, rng, slot.x.data(), slot.y.data());
}

void BatchLoader::worker_loop() {
  const auto nslots = static_cast<int64_t>(slots_.size());
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || next_to_fill_ < released_ + nslots; });
    if (stop_) return;
    const int64_t index = next_to_fill_++;
    Slot& slot = *slots_[static_cast<size_t>(index % nslots)];
    lock.unlock();
    fill(slot, index);
    lock.lock();
    slot.index = index;
    slot.ready = true;
    ready_cv_.notify_all();  // only the consumer waits here
  }
}

BatchView BatchLoader::next() {
  const auto nslots = static_cast<int64_t>(slots_.size());
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t index = next_to_consume_;
  if (index >= released_ + nslots) {
    throw Error("BatchLoader::next: all " + std::to_string(nslots) +
                " slots are held; release() a batch first");
  }
  Slot& slot = *slots_[static_cast<size_t>(index % nslots)];
  if (workers_.empty()) {  // sync: fill in the caller; the slot is free (checked above)
    lock.unlock();
    fill(slot, index);
    lock.lock();
    slot.index = index;
    slot.ready = true;
  } else {
    ready_cv_.wait(lock, [&] { return slot.ready && slot.index == index; });
  }
  ++next_to_consume_;
  BatchView view;
  view.x = slot.x.data();
  view.y = slot.y.data();
  view.batch_size = batch_size_;
  view.block_size = block_size_;
  view.index = index;
  view.slot = index % nslots;
  return view;
}

void BatchLoader::release(const BatchView& batch) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (batch.index != released_ || batch.index >= next_to_consume_) {
      throw Error("BatchLoader::release: got batch " + std::to_string(batch.index) +
                  ", expected batch " + std::to_string(released_) + " (release in order)");
    }
    slots_[static_cast<size_t>(batch.slot)]->ready = false;
    ++released_;
  }
  cv_.notify_one();  // one more batch index became claimable
}

}  // namespace llmprof::data
