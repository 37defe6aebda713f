// Data-parallel sharding of the sample stream (loader.h Shard): one rank with batch W x B sees
// exactly the rows of W ranks with batch B, concatenated in rank order, for every sampler and
// every per-sample random draw (window starts, sequence picks, MLM masks).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "llmprof/data/corpus.h"
#include "llmprof/data/encoder_data.h"
#include "llmprof/data/loader.h"
#include "llmprof/data/text_dataset.h"
#include "llmprof/error.h"

namespace llmprof::data {
namespace {

using Longs = std::vector<int64_t>;

// One batch's buffers, filled by a sampler.
struct Filled {
  Longs x, y, mask, pos;
  Filled(const BatchSampler& s, int64_t index) {
    const BatchLayout l = s.layout();
    x.resize(static_cast<size_t>(l.batch_size * l.block_size));
    y.resize(static_cast<size_t>(l.batch_size * l.y_cols));
    if (l.has_mask) mask.resize(x.size());
    pos.resize(static_cast<size_t>(l.batch_size * l.pos_cols));
    s.fill(index, BatchBuffers{x.data(), y.data(), mask.empty() ? nullptr : mask.data(),
                               pos.empty() ? nullptr : pos.data()});
  }
};

// Rows [first, first + n) of a row-major buffer with `cols` columns.
Longs rows(const Longs& v, int64_t cols, int64_t first, int64_t n) {
  return Longs(v.begin() + first * cols, v.begin() + (first + n) * cols);
}

// Checks that batch i of `whole` (batch W x B) is the concatenation of batch i of each shard.
void expect_concatenation(const BatchSampler& whole, const std::vector<const BatchSampler*>& ranks,
                          int64_t index) {
  const Filled all(whole, index);
  const BatchLayout l = ranks[0]->layout();
  for (size_t r = 0; r < ranks.size(); ++r) {
    const Filled part(*ranks[r], index);
    const auto first = static_cast<int64_t>(r) * l.batch_size;
    EXPECT_EQ(part.x, rows(all.x, l.block_size, first, l.batch_size)) << "rank " << r;
    EXPECT_EQ(part.y, rows(all.y, l.y_cols, first, l.batch_size)) << "rank " << r;
    if (l.has_mask) EXPECT_EQ(part.mask, rows(all.mask, l.block_size, first, l.batch_size));
    if (l.pos_cols > 0) EXPECT_EQ(part.pos, rows(all.pos, l.pos_cols, first, l.batch_size));
  }
}

TEST(Shard, GlobalSampleIndicesOfTheRanksAreDisjointAndMakeTheGlobalBatch) {
  const int64_t B = 3, W = 4;
  for (int64_t batch : {0, 1, 7}) {
    std::set<int64_t> seen;
    for (int64_t r = 0; r < W; ++r) {
      for (int64_t b = 0; b < B; ++b) {
        const int64_t id = global_sample_index(Shard{r, W}, B, batch, b);
        EXPECT_TRUE(seen.insert(id).second) << "sample " << id << " on two ranks";
        // One rank with batch W x B holds the same sample at row r * B + b.
        EXPECT_EQ(id, global_sample_index(Shard{}, W * B, batch, r * B + b));
      }
    }
    // The union is exactly the global batch's W x B samples [batch*W*B, (batch+1)*W*B).
    EXPECT_EQ(static_cast<int64_t>(seen.size()), W * B);
    EXPECT_EQ(*seen.begin(), batch * W * B);
    EXPECT_EQ(*seen.rbegin(), (batch + 1) * W * B - 1);
  }
}

TEST(Shard, TwoRanksOfWindowsAreTheRowsOfOneRankWithTwiceTheBatch) {
  const std::string text = generate_corpus(5, 20000);
  const std::vector<int32_t> tokens(text.begin(), text.end());
  const auto whole = make_window_sampler(tokens, 4, 16, 1337);
  const auto r0 = make_window_sampler(tokens, 2, 16, 1337, Shard{0, 2});
  const auto r1 = make_window_sampler(tokens, 2, 16, 1337, Shard{1, 2});
  for (int64_t i : {0, 1, 5, 100}) expect_concatenation(*whole, {r0.get(), r1.get()}, i);
  // The two ranks' rows differ (the slices are not copies of each other).
  EXPECT_NE(Filled(*r0, 0).x, Filled(*r1, 0).x);
}

// One id per byte: hand-checkable encoder sequences without a vocabulary file.
class ByteTokenizer final : public Tokenizer {
 public:
  std::string name() const override { return "bytes"; }
  int64_t vocab_size() const override { return 1256; }
  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    for (char c : text) ids.push_back(1000 + static_cast<unsigned char>(c));
    return ids;
  }
  std::string decode(const std::vector<int32_t>&) const override { return {}; }
  void save(const std::string&) const override {}
};

TextDataset text_rows(int n, bool labelled) {
  TextDataset ds;
  ds.path = "mem.csv";
  for (int i = 0; i < n; ++i) {
    ds.records.push_back(
        TextRecord{generate_corpus(static_cast<uint64_t>(i), 60), labelled ? i % 2 : -1, i + 2});
  }
  return ds;
}

TEST(Shard, MlmMasksOfThreeRanksAreTheRowsOfOneRankWithThreeTimesTheBatch) {
  const ByteTokenizer tok;
  const EncodedSet set = encode_mlm_stream(text_rows(40, false), tok, SpecialTokens{}, 32);
  MlmOptions opt;
  opt.probability = 0.15;
  opt.vocab_size = tok.vocab_size();
  for (SampleOrder order : {SampleOrder::kRandom, SampleOrder::kSequential}) {
    const auto whole = make_mlm_sampler(set, 6, opt, order, 11);
    std::vector<std::unique_ptr<BatchSampler>> ranks;
    for (int64_t r = 0; r < 3; ++r) {
      ranks.push_back(make_mlm_sampler(set, 2, opt, order, 11, Shard{r, 3}));
    }
    for (int64_t i : {0, 1, 3}) {
      expect_concatenation(*whole, {ranks[0].get(), ranks[1].get(), ranks[2].get()}, i);
    }
  }
}

TEST(Shard, ClassifyRowsOfTwoRanksAreTheRowsOfOneRankWithTwiceTheBatch) {
  const ByteTokenizer tok;
  const EncodedSet set = encode_classification(text_rows(30, true), tok, SpecialTokens{}, 24);
  const auto whole = make_classify_sampler(set, 8, SampleOrder::kRandom, 3);
  const auto r0 = make_classify_sampler(set, 4, SampleOrder::kRandom, 3, Shard{0, 2});
  const auto r1 = make_classify_sampler(set, 4, SampleOrder::kRandom, 3, Shard{1, 2});
  for (int64_t i : {0, 2, 9}) expect_concatenation(*whole, {r0.get(), r1.get()}, i);
}

TEST(Shard, RejectsARankOutsideTheWorld) {
  const std::string text = generate_corpus(5, 2000);
  const std::vector<int32_t> tokens(text.begin(), text.end());
  EXPECT_THROW(make_window_sampler(tokens, 2, 16, 1, Shard{2, 2}), DataError);
  EXPECT_THROW(make_window_sampler(tokens, 2, 16, 1, Shard{-1, 2}), DataError);
  EXPECT_THROW(make_window_sampler(tokens, 2, 16, 1, Shard{0, 0}), DataError);
}

}  // namespace
}  // namespace llmprof::data
