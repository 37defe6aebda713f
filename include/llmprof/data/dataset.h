// Token datasets: a token stream split into train/val, and nanoGPT's random contiguous windows.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace llmprof::data {

struct TokenSplits {
  std::vector<int32_t> train;  // first (1 - val_fraction) of the stream
  std::vector<int32_t> val;    // the tail
};

// Splits tokens at (1 - val_fraction). Throws DataError if either split has fewer than
// block_size + 1 tokens (no window fits), saying how many tokens there are and are needed.
TokenSplits split_tokens(const std::vector<int32_t>& tokens, double val_fraction, int64_t block_size);

// Fills x and y, each (B, T) row-major int64, with B random windows of the stream:
// x[b] = tokens[i_b : i_b + T], y[b] = tokens[i_b + 1 : i_b + T + 1], i_b uniform in
// [0, size - T - 1]. Deterministic given rng state.
void sample_batch(const std::vector<int32_t>& tokens,
                  int64_t batch_size,
                  int64_t block_size,
                  std::mt19937_64& rng,
                  int64_t* x,
                  int64_t* y);

}  // namespace llmprof::data
