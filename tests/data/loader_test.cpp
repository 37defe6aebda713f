#include "llmprof/data/loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "llmprof/data/corpus.h"
#include "llmprof/data/dataset.h"
#include "llmprof/error.h"
#include "rng.h"

namespace llmprof::data {
namespace {

using Clock = std::chrono::steady_clock;

// A token stream with some variety: the generated corpus's bytes.
std::vector<int32_t> corpus_tokens(int64_t n) {
  const std::string text = generate_corpus(11, n);
  return std::vector<int32_t>(text.begin(), text.end());
}

// The first n batches (x then y, flattened) from a loader with num_workers workers.
std::vector<int64_t> first_batches(const std::vector<int32_t>& tokens,
                                   int64_t num_workers,
                                   int64_t n) {
  BatchLoader loader(tokens, 4, 16, num_workers, 2, 1337);
  EXPECT_EQ(loader.num_workers(), num_workers);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    const BatchView b = loader.next();
    EXPECT_EQ(b.index, i);
    EXPECT_EQ(b.batch_size, 4);
    EXPECT_EQ(b.block_size, 16);
    out.insert(out.end(), b.x, b.x + 64);
    out.insert(out.end(), b.y, b.y + 64);
    loader.release(b);
  }
  return out;
}

TEST(BatchLoader, GivesTheSameBatchesWhateverNumWorkers) {
  const auto tokens = corpus_tokens(100000);
  const auto sync = first_batches(tokens, 0, 50);
  EXPECT_EQ(first_batches(tokens, 1, 50), sync);
  EXPECT_EQ(first_batches(tokens, 3, 50), sync);
  // Batches differ from one another (the seed mixes in the index).
  EXPECT_FALSE(std::equal(sync.begin(), sync.begin() + 128, sync.begin() + 128));
}

TEST(BatchLoader, GivesShiftedTargetsWithinEachBatch) {
  const auto tokens = corpus_tokens(50000);
  BatchLoader loader(tokens, 8, 32, 2, 4, 5);
  for (int i = 0; i < 10; ++i) {
    const BatchView b = loader.next();
    for (int64_t r = 0; r < 8; ++r) {
      for (int64_t t = 0; t + 1 < 32; ++t) ASSERT_EQ(b.y[r * 32 + t], b.x[r * 32 + t + 1]);
    }
    loader.release(b);
  }
}

TEST(BatchLoader, LetsTheConsumerHoldSeveralBatchesWhenReleasedInOrder) {
  const auto tokens = corpus_tokens(50000);
  BatchLoader loader(tokens, 2, 8, 2, 2, 9);  // 3 slots
  const BatchView a = loader.next();
  const BatchView b = loader.next();
  const BatchView c = loader.next();
  EXPECT_THROW(loader.next(), Error);      // all slots held: would wait forever
  EXPECT_THROW(loader.release(b), Error);  // out of order
  loader.release(a);
  loader.release(b);
  loader.release(c);
  EXPECT_EQ(loader.next().index, 3);
}

TEST(BatchLoader, DestructsWithoutHangingWhenBatchesAreUnreleased) {
  const auto tokens = corpus_tokens(50000);
  auto done = std::async(std::launch::async, [&] {
    for (int64_t workers : {0, 1, 3}) {
      {
        BatchLoader loader(tokens, 4, 16, workers, 2, 1);  // workers block on a full ring
      }
      BatchLoader loader(tokens, 4, 16, workers, 2, 1);
      loader.next();
      loader.next();  // held, never released
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "~BatchLoader hung";
  done.get();
}

TEST(BatchLoader, WaitsLittleInNextWhenConsumerIsSlowerThanProduction) {
  // The consumer "trains" 5 ms per batch; 2 workers fill a 16 x 64 batch in microseconds, so
  // after the first batch next() should find its batch ready. Median over 30 batches after 5
  // warm-up ones, against a 1 ms bound (two orders of magnitude above the expected wait).
  const auto tokens = corpus_tokens(200000);
  BatchLoader loader(tokens, 16, 64, 2, 4, 3);
  std::vector<double> waits_ms;
  for (int i = 0; i < 35; ++i) {
    const auto t0 = Clock::now();
    const BatchView b = loader.next();
    const double wait_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (i >= 5) waits_ms.push_back(wait_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    loader.release(b);
  }
  std::sort(waits_ms.begin(), waits_ms.end());
  const double median_ms = waits_ms[waits_ms.size() / 2];
  EXPECT_LT(median_ms, 1.0) << "median next() wait " << median_ms << " ms, max " << waits_ms.back()
                            << " ms";
}

// A sampler with every buffer: x (B, T), y (B, 2), mask (B, T), pos (B, 2), each value a
// function of (index, row, column) so a test can check where it landed.
class StampSampler final : public BatchSampler {
 public:
  BatchLayout layout() const override {
    BatchLayout l;
    l.batch_size = 3;
    l.block_size = 5;
    l.y_cols = 2;
    l.has_mask = true;
    l.pos_cols = 2;
    return l;
  }
  void fill(int64_t index, const BatchBuffers& out) const override {
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t t = 0; t < 5; ++t) {
        out.x[b * 5 + t] = index * 1000 + b * 10 + t;
        out.mask[b * 5 + t] = t <= b + 1 ? 1 : 0;  // row b has b + 2 real tokens
      }
      for (int64_t k = 0; k < 2; ++k) {
        out.y[b * 2 + k] = -(index * 1000 + b * 10 + k);
        out.pos[b * 2 + k] = k + b;
      }
    }
  }
};

TEST(BatchLoader, FillsMaskAndPosWhenSamplerLayoutHasThem) {
  const StampSampler sampler;
  for (int64_t workers : {0, 2}) {
    BatchLoader loader(sampler, workers, 2);
    for (int64_t i = 0; i < 6; ++i) {
      const BatchView v = loader.next();
      ASSERT_EQ(v.index, i);
      EXPECT_EQ(v.batch_size, 3);
      EXPECT_EQ(v.block_size, 5);
      EXPECT_EQ(v.layout.y_cols, 2);
      EXPECT_TRUE(v.layout.has_mask);
      EXPECT_EQ(v.layout.pos_cols, 2);
      ASSERT_NE(v.mask, nullptr);
      ASSERT_NE(v.pos, nullptr);
      EXPECT_EQ(std::vector<int64_t>(v.x + 10, v.x + 15),
                (std::vector<int64_t>{i * 1000 + 20, i * 1000 + 21, i * 1000 + 22, i * 1000 + 23,
                                      i * 1000 + 24}));
      EXPECT_EQ(std::vector<int64_t>(v.mask, v.mask + 15),
                (std::vector<int64_t>{1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0}));
      EXPECT_EQ(std::vector<int64_t>(v.y, v.y + 6),
                (std::vector<int64_t>{-i * 1000, -i * 1000 - 1, -i * 1000 - 10, -i * 1000 - 11,
                                      -i * 1000 - 20, -i * 1000 - 21}));
      EXPECT_EQ(std::vector<int64_t>(v.pos, v.pos + 6), (std::vector<int64_t>{0, 1, 1, 2, 2, 3}));
      loader.release(v);
    }
  }
}

TEST(BatchLoader, ReportsTheWindowLayoutWithoutMaskOrPos) {
  const auto tokens = corpus_tokens(1000);
  BatchLoader loader(tokens, 2, 8, 0, 1, 1);
  const BatchView v = loader.next();
  EXPECT_EQ(v.layout.batch_size, 2);
  EXPECT_EQ(v.layout.block_size, 8);
  EXPECT_EQ(v.layout.y_cols, 8);
  EXPECT_FALSE(v.layout.has_mask);
  EXPECT_EQ(v.layout.pos_cols, 0);
  EXPECT_EQ(v.mask, nullptr);
  EXPECT_EQ(v.pos, nullptr);
  // Row b of batch i is a window whose start is drawn from an rng seeded by
  // sample_seed(seed, i * B + b): uniform in [0, size - T - 1], as sample_batch draws it.
  std::vector<int64_t> x(16), y(16);
  for (int64_t b = 0; b < 2; ++b) {
    std::mt19937_64 rng(detail::sample_seed(1, b));
    sample_batch(tokens, 1, 8, rng, x.data() + b * 8, y.data() + b * 8);
  }
  EXPECT_EQ(std::vector<int64_t>(v.x, v.x + 16), x);
  EXPECT_EQ(std::vector<int64_t>(v.y, v.y + 16), y);
  loader.release(v);
}

// Records what the loader asks of its slot memory, and checks that no slot is refilled while
// the consumer holds it or before its release was fenced (what the CUDA loop relies on).
class RecordingMemory : public SlotMemory {
 public:
  explicit RecordingMemory(int fail_after = -1) : fail_after_(fail_after) {}
  int64_t* allocate(size_t count) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_after_ >= 0 && allocated_ == fail_after_) throw DataError("no pinned memory left");
    ++allocated_;
    ++live_;
    return new int64_t[count]();
  }
  void deallocate(int64_t* buffer) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    --live_;
    delete[] buffer;
  }
  void released(int64_t slot) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++releases_[slot];
  }
  void before_fill(int64_t slot) override {
    std::lock_guard<std::mutex> lock(mu_);
    // Fill k of a slot (from 0) comes after its k-th release: the copies out of it are fenced.
    if (fills_[slot] > releases_[slot]) ++unfenced_fills_;
    ++fills_[slot];
  }
  int allocated() const { return allocated_; }
  int live() const { return live_; }
  int unfenced_fills() const { return unfenced_fills_; }
  int64_t fills(int64_t slot) { return fills_[slot]; }
  int64_t releases(int64_t slot) { return releases_[slot]; }

 private:
  std::mutex mu_;
  int fail_after_;
  int allocated_ = 0, live_ = 0, unfenced_fills_ = 0;
  std::map<int64_t, int64_t> releases_, fills_;
};

TEST(BatchLoader, FencesEachRefillBehindTheSlotsRelease) {
  const auto tokens = corpus_tokens(50000);
  const auto sampler = make_window_sampler(tokens, 4, 16, 1337);
  const StampSampler stamps;  // with mask and pos: four buffers per slot
  for (int64_t workers : {0, 1, 3}) {
    RecordingMemory memory;
    {
      BatchLoader loader(*sampler, workers, 2, &memory);
      EXPECT_EQ(loader.num_slots(), 3);
      EXPECT_EQ(memory.allocated(), 3 * 2);  // x and y per slot
      std::vector<int64_t> batches;
      for (int64_t i = 0; i < 30; ++i) {
        const BatchView b = loader.next();
        batches.insert(batches.end(), b.x, b.x + 64);
        batches.insert(batches.end(), b.y, b.y + 64);
        loader.release(b);
      }
      EXPECT_EQ(batches, first_batches(tokens, 0, 30)) << "the same batches as host memory";
      for (int64_t s = 0; s < 3; ++s) EXPECT_EQ(memory.releases(s), 10) << "slot " << s;
    }
    EXPECT_EQ(memory.unfenced_fills(), 0) << workers << " workers";
    EXPECT_EQ(memory.live(), 0) << "every buffer handed back";
    RecordingMemory four;
    { BatchLoader loader(stamps, workers, 1, &four); }
    EXPECT_EQ(four.allocated(), 2 * 4);
    EXPECT_EQ(four.live(), 0);
  }
  // A failed allocation frees what was allocated and throws its error.
  RecordingMemory failing(5);
  EXPECT_THROW(BatchLoader(*sampler, 2, 4, &failing), DataError);
  EXPECT_EQ(failing.allocated(), 5);
  EXPECT_EQ(failing.live(), 0);
}

TEST(BatchLoader, ThrowsWhenArgumentsAreInvalid) {
  const auto tokens = corpus_tokens(100);
  EXPECT_THROW(BatchLoader(tokens, 0, 8, 1, 2, 1), DataError);
  EXPECT_THROW(BatchLoader(tokens, 2, 8, -1, 2, 1), DataError);
  EXPECT_THROW(BatchLoader(tokens, 2, 8, 1, 0, 1), DataError);
  EXPECT_THROW(BatchLoader(tokens, 2, 100, 1, 2, 1), DataError);  // no window of 101 tokens
}

}  // namespace
}  // namespace llmprof::data
