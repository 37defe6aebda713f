#include "llmprof/gpu/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

namespace llmprof::gpu {
namespace {

TEST(ActivityBufferPool, HandsOutAlignedBuffersUntilExhaustedThenCountsDrops) {
  ActivityBufferPool pool(2, 1001);  // rounded up to 1008, a multiple of 8
  EXPECT_EQ(pool.buffer_bytes(), 1008u);
  size_t size = 0;
  uint8_t* a = pool.request(&size);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(size, 1008u);
  uint8_t* b = pool.request(&size);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % ActivityBufferPool::kAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % ActivityBufferPool::kAlignment, 0u);
  EXPECT_EQ(pool.free_buffers(), 0u);
  EXPECT_TRUE(pool.drop_warning().empty());

  size = 123;
  EXPECT_EQ(pool.request(&size), nullptr) << "the pool never grows";
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(pool.request(&size), nullptr);
  EXPECT_EQ(pool.dropped_requests(), 2);
  const std::string w = pool.drop_warning();
  EXPECT_NE(w.find("2 activity buffer request(s) refused"), std::string::npos) << w;
  EXPECT_NE(w.find("all 2 buffers"), std::string::npos) << w;
}

TEST(ActivityBufferPool, CompletedBuffersAreQueuedParsedAndReused) {
  ActivityBufferPool pool(2, 64);
  size_t size = 0;
  uint8_t* a = pool.request(&size);
  uint8_t* b = pool.request(&size);
  pool.complete(b, 40);
  pool.complete(a, 1000);  // more than the buffer: clipped to its size
  EXPECT_EQ(pool.queued_buffers(), 2u);

  std::vector<CompletedBuffer> done;
  done.reserve(pool.num_buffers());
  pool.take_completed(done);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].data, b);  // oldest first
  EXPECT_EQ(done[0].valid_bytes, 40u);
  EXPECT_EQ(done[1].valid_bytes, 64u);
  EXPECT_EQ(pool.queued_buffers(), 0u);
  EXPECT_EQ(pool.free_buffers(), 0u) << "parsing buffers are not free yet";

  pool.release(b);
  EXPECT_EQ(pool.free_buffers(), 1u);
  EXPECT_EQ(pool.request(&size), b) << "a released buffer is handed out again";
  pool.release(a);
  EXPECT_EQ(pool.request(&size), a);
  EXPECT_EQ(pool.dropped_requests(), 0);
}

TEST(ActivityBufferPool, ForeignAndRepeatedPointersAreIgnoredAndCounted) {
  ActivityBufferPool pool(1, 64);
  size_t size = 0;
  uint8_t* a = pool.request(&size);
  uint8_t other[64];
  pool.complete(other, 8);  // not ours
  pool.complete(a + 8, 8);  // not the start of a buffer
  pool.complete(a, 8);
  pool.complete(a, 8);  // completed twice
  EXPECT_EQ(pool.queued_buffers(), 1u);
  std::vector<CompletedBuffer> done;
  pool.take_completed(done);
  pool.release(a);
  pool.release(a);  // released twice
  EXPECT_EQ(pool.free_buffers(), 1u);
  EXPECT_EQ(pool.foreign_buffers(), 4);
}

TEST(ActivityBufferPool, RejectsAnEmptyPool) {
  EXPECT_THROW(ActivityBufferPool(0, 64), std::invalid_argument);
  EXPECT_THROW(ActivityBufferPool(2, 0), std::invalid_argument);
}

}  // namespace
}  // namespace llmprof::gpu
