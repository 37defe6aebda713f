// Portable random helpers for the data concern. std:: distributions differ between standard
// libraries, so every draw here is built from raw mt19937_64 output (whose sequence the standard
// fixes): the same seed gives the same corpus and batches with libstdc++, libc++ or MSVC.
#pragma once

#include <cstdint>
#include <random>

namespace llmprof::data::detail {

// splitmix64's finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mix for deriving seeds.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The seed of batch `index` in a sequence seeded by `seed`; independent of who samples it.
inline uint64_t batch_seed(uint64_t seed, int64_t index) {
  return splitmix64(seed ^ splitmix64(static_cast<uint64_t>(index)));
}

// The seed of global sample `index` (data-parallel runs key every per-sample draw by it, so a
// sample is drawn the same on whichever rank holds it); a domain of its own apart from batch_seed.
inline uint64_t sample_seed(uint64_t seed, int64_t index) {
  return splitmix64(splitmix64(seed ^ 0x5A4D504C45ULL) ^ static_cast<uint64_t>(index));
}

// Throws DataError unless 0 <= rank < world_size (defined in loader.cpp).
void check_shard(const char* who, int64_t rank, int64_t world_size);

// Uniform integer in [0, n), n >= 1, by rejection: draws below 2^64 mod n are redrawn so that
// r % n has no modulo bias.
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
  while (true) {
    const uint64_t r = rng();
    if (r >= threshold) return r % n;
  }
}

}  // namespace llmprof::data::detail
