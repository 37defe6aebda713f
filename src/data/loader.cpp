// The window sampler and BatchLoader. The loader's workers claim batch indices in order and have
// the sampler fill ring slots sized from its layout; the consumer takes them in order. Slot s
// holds batches s, s + nslots, s + 2 nslots, ...; batch i may be filled once batch i - nslots has
// been released, i.e. while i < released_ + nslots. One mutex guards the bookkeeping; filling
// happens outside it.
#include "llmprof/data/loader.h"

#include <random>
#include <string>

#include "llmprof/data/dataset.h"
#include "llmprof/error.h"
#include "rng.h"

namespace llmprof::data {

namespace {

// nanoGPT's random windows: row b of batch i starts uniformly in [0, size - T - 1], drawn by an
// rng seeded by (seed, global sample index of the row).
class WindowSampler final : public BatchSampler {
 public:
  WindowSampler(const std::vector<int32_t>& tokens,
                int64_t batch_size,
                int64_t block_size,
                uint64_t seed,
                Shard shard)
      : tokens_(tokens), seed_(seed), shard_(shard) {
    layout_.batch_size = batch_size;
    layout_.block_size = block_size;
    layout_.y_cols = block_size;  // y (B, T): x shifted by one
  }

  BatchLayout layout() const override { return layout_; }

  void fill(int64_t index, const BatchBuffers& out) const override {
    const int64_t B = layout_.batch_size, T = layout_.block_size;
    const auto n_starts = static_cast<uint64_t>(static_cast<int64_t>(tokens_.size()) - T);
    const int32_t* src = tokens_.data();
    for (int64_t b = 0; b < B; ++b) {
      std::mt19937_64 rng(detail::sample_seed(seed_, global_sample_index(shard_, B, index, b)));
      const auto start = static_cast<int64_t>(detail::uniform_below(rng, n_starts));
      for (int64_t t = 0; t < T; ++t) {
        out.x[b * T + t] = src[start + t];
        out.y[b * T + t] = src[start + t + 1];
      }
    }
  }

 private:
  const std::vector<int32_t>& tokens_;
  uint64_t seed_;
  Shard shard_;
  BatchLayout layout_;
};

}  // namespace

namespace detail {

void check_shard(const char* who, int64_t rank, int64_t world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw DataError(std::string(who) + ": rank " + std::to_string(rank) +
                    " is not in [0, world size " + std::to_string(world_size) + ")");
  }
}

}  // namespace detail

std::unique_ptr<BatchSampler> make_window_sampler(const std::vector<int32_t>& tokens,
                                                  int64_t batch_size,
                                                  int64_t block_size,
                                                  uint64_t seed,
                                                  Shard shard) {
  if (batch_size < 1 || block_size < 1) {
    throw DataError("window sampler: need batch_size >= 1 and block_size >= 1; got " +
                    std::to_string(batch_size) + ", " + std::to_string(block_size));
  }
  if (static_cast<int64_t>(tokens.size()) < block_size + 1) {
    throw DataError("window sampler: " + std::to_string(tokens.size()) +
                    " tokens hold no window of block_size " + std::to_string(block_size) + " + 1");
  }
  detail::check_shard("window sampler", shard.rank, shard.world_size);
  return std::make_unique<WindowSampler>(tokens, batch_size, block_size, seed, shard);
}

// ---------------------------------------------------------------------------------------------
// BatchLoader

namespace {

// Pageable host memory, refillable at once.
class HostMemory : public SlotMemory {
 public:
  int64_t* allocate(size_t count) override { return new int64_t[count](); }
  void deallocate(int64_t* buffer) noexcept override { delete[] buffer; }
  void released(int64_t /*slot*/) override {}
  void before_fill(int64_t /*slot*/) override {}
};

}  // namespace

struct BatchLoader::Slot {
  int64_t* x = nullptr;       // (B, T)
  int64_t* y = nullptr;       // (B, y_cols)
  int64_t* mask = nullptr;    // (B, T), null without a mask
  int64_t* pos = nullptr;     // (B, pos_cols), null without positions
  int64_t index = -1;         // the batch it holds, valid when ready
  bool ready = false;         // filled and not yet released
};

BatchLoader::BatchLoader(const BatchSampler& sampler, int64_t num_workers, int64_t prefetch,
                         SlotMemory* memory, int64_t first_batch)
    : sampler_(&sampler), memory_(memory), layout_(sampler.layout()) {
  if (first_batch < 0) {
    throw DataError("BatchLoader: first_batch must be >= 0, got " + std::to_string(first_batch));
  }
  next_to_fill_ = next_to_consume_ = released_ = first_batch;  // slots are index % count
  start(num_workers, prefetch);
}

BatchLoader::BatchLoader(const std::vector<int32_t>& tokens,
                         int64_t batch_size,
                         int64_t block_size,
                         int64_t num_workers,
                         int64_t prefetch,
                         uint64_t seed)
    : owned_sampler_(make_window_sampler(tokens, batch_size, block_size, seed)),
      sampler_(owned_sampler_.get()),
      memory_(nullptr),
      layout_(sampler_->layout()) {
  start(num_workers, prefetch);
}

void BatchLoader::start(int64_t num_workers, int64_t prefetch) {
  const BatchLayout& l = layout_;
  if (l.batch_size < 1 || l.block_size < 1 || l.y_cols < 1 || l.pos_cols < 0 || num_workers < 0 ||
      prefetch < 1) {
    throw DataError(
        "BatchLoader: need batch_size >= 1, block_size >= 1, y_cols >= 1, pos_cols >= 0, "
        "num_workers >= 0, prefetch >= 1; got " +
        std::to_string(l.batch_size) + ", " + std::to_string(l.block_size) + ", " +
        std::to_string(l.y_cols) + ", " + std::to_string(l.pos_cols) + ", " +
        std::to_string(num_workers) + ", " + std::to_string(prefetch));
  }
  if (memory_ == nullptr) {
    default_memory_ = std::make_unique<HostMemory>();
    memory_ = default_memory_.get();
  }
  const auto rows = static_cast<size_t>(l.batch_size);
  slots_.reserve(static_cast<size_t>(prefetch + 1));
  for (int64_t s = 0; s < prefetch + 1; ++s) {
    slots_.push_back(new Slot);  // freed by the destructor, or free_slots() on a throw below
    Slot& slot = *slots_.back();
    try {
      slot.x = memory_->allocate(rows * static_cast<size_t>(l.block_size));
      slot.y = memory_->allocate(rows * static_cast<size_t>(l.y_cols));
      if (l.has_mask) slot.mask = memory_->allocate(rows * static_cast<size_t>(l.block_size));
      if (l.pos_cols > 0) slot.pos = memory_->allocate(rows * static_cast<size_t>(l.pos_cols));
    } catch (...) {
      free_slots();
      throw;
    }
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
  free_slots();
}

void BatchLoader::free_slots() noexcept {
  for (Slot* s : slots_) {
    for (int64_t* buffer : {s->x, s->y, s->mask, s->pos}) {
      if (buffer != nullptr) memory_->deallocate(buffer);
    }
    delete s;
  }
  slots_.clear();
}

void BatchLoader::fill(Slot& slot, int64_t index) {
  memory_->before_fill(index % static_cast<int64_t>(slots_.size()));
  sampler_->fill(index, BatchBuffers{slot.x, slot.y, slot.mask, slot.pos});
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
  view.x = slot.x;
  view.y = slot.y;
  view.mask = slot.mask;
  view.pos = slot.pos;
  view.layout = layout_;
  view.batch_size = layout_.batch_size;
  view.block_size = layout_.block_size;
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
    memory_->released(batch.slot);
    slots_[static_cast<size_t>(batch.slot)]->ready = false;
    ++released_;
  }
  cv_.notify_one();  // one more batch index became claimable
}

}  // namespace llmprof::data
