#include "llmprof/data/dataset.h"

#include <fmt/format.h>

#include <string>

#include "llmprof/error.h"
#include "rng.h"

namespace llmprof::data {

TokenSplits split_tokens(const std::vector<int32_t>& tokens,
                         double val_fraction,
                         int64_t block_size) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0)) {
    throw DataError("data.val_fraction must be in [0, 1), got " + fmt::format("{:g}", val_fraction));
  }
  const auto n = static_cast<int64_t>(tokens.size());
  const auto n_train = static_cast<int64_t>(static_cast<double>(n) * (1.0 - val_fraction));
  const int64_t need = block_size + 1;  // one (T + 1)-token window: x and its shifted target y
  for (const auto& [split, size] : {std::pair<const char*, int64_t>{"train", n_train},
                                    std::pair<const char*, int64_t>{"val", n - n_train}}) {
    if (size < need) {
      throw DataError(std::string("data: the ") + split + " split has " + std::to_string(size) +
                      " tokens but block_size " + std::to_string(block_size) + " needs at least " +
                      std::to_string(need) + " (the corpus has " + std::to_string(n) +
                      " tokens, val_fraction " + fmt::format("{:g}", val_fraction) +
                      "): use a larger corpus, a smaller model.block_size or another val_fraction");
    }
  }
  TokenSplits splits;
  splits.train.assign(tokens.begin(), tokens.begin() + n_train);
  splits.val.assign(tokens.begin() + n_train, tokens.end());
  return splits;
}

void sample_batch(const std::vector<int32_t>& tokens,
                  int64_t batch_size,
                  int64_t block_size,
                  std::mt19937_64& rng,
                  int64_t* x,
                  int64_t* y) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (block_size < 1 || n < block_size + 1) {
    throw DataError("sample_batch: " + std::to_string(n) + " tokens hold no window of block_size " +
                    std::to_string(block_size) + " + 1");
  }
  // Window starts are uniform in [0, n - T - 1], as nanoGPT's torch.randint(len(data) - T).
  const auto n_starts = static_cast<uint64_t>(n - block_size);
  const int32_t* src = tokens.data();
  for (int64_t b = 0; b < batch_size; ++b) {
    const auto start = static_cast<int64_t>(detail::uniform_below(rng, n_starts));
    int64_t* xb = x + b * block_size;  // row b of (B, T)
    int64_t* yb = y + b * block_size;
    for (int64_t t = 0; t < block_size; ++t) {
      xb[t] = src[start + t];
      yb[t] = src[start + t + 1];
    }
  }
}

}  // namespace llmprof::data
