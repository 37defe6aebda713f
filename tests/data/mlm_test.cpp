#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "llmprof/data/encoder_data.h"
#include "llmprof/data/text_dataset.h"
#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::data {
namespace {

using Ids = std::vector<int32_t>;
using Longs = std::vector<int64_t>;

constexpr int32_t kByteBase = 1000;  // FakeTokenizer's id of byte b is kByteBase + b

// One id per byte, kByteBase + byte: hand-computable sequences, no vocabulary file.
class FakeTokenizer final : public Tokenizer {
 public:
  std::string name() const override { return "fake"; }
  int64_t vocab_size() const override { return kByteBase + 256; }
  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    for (char c : text) ids.push_back(kByteBase + static_cast<unsigned char>(c));
    return ids;
  }
  std::string decode(const std::vector<int32_t>&) const override { return {}; }
  void save(const std::string&) const override {}
};

// BERT's ids: [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103.
const SpecialTokens kSp;

int32_t id(char c) { return kByteBase + c; }

TextDataset dataset(const std::vector<std::pair<std::string, int32_t>>& rows) {
  TextDataset ds;
  ds.path = "mem.csv";
  for (size_t i = 0; i < rows.size(); ++i) {
    ds.records.push_back(TextRecord{rows[i].first, rows[i].second, static_cast<int64_t>(i) + 2});
  }
  return ds;
}

using test::data_error_of;

// Buffers for one batch of a layout, and fill() into them.
struct Batch {
  Longs x, y, mask, pos;
  explicit Batch(const BatchLayout& l)
      : x(static_cast<size_t>(l.batch_size * l.block_size)),
        y(static_cast<size_t>(l.batch_size * l.y_cols)),
        mask(l.has_mask ? x.size() : 0),
        pos(static_cast<size_t>(l.batch_size * l.pos_cols)) {}
  void fill(const BatchSampler& s, int64_t index) {
    s.fill(index, BatchBuffers{x.data(), y.data(), mask.empty() ? nullptr : mask.data(),
                               pos.empty() ? nullptr : pos.data()});
  }
};

MlmOptions bert_mlm() {
  MlmOptions opt;
  opt.vocab_size = 30522;
  return opt;
}

TEST(EncodeMlmStream, ChunksTheConcatenatedTokensAndDropsThePartialChunk) {
  const FakeTokenizer tok;
  const TextDataset ds = dataset({{"abc", -1}, {"defg", -1}, {"hi", -1}});  // 9 tokens
  const EncodedSet five = encode_mlm_stream(ds, tok, kSp, 5);               // 3 tokens per sequence
  EXPECT_EQ(five.num_sequences, 3);
  EXPECT_EQ(five.ids, (Ids{101, id('a'), id('b'), id('c'), 102,     //
                           101, id('d'), id('e'), id('f'), 102,     //
                           101, id('g'), id('h'), id('i'), 102}));  // records run together
  EXPECT_EQ(five.lengths, (Ids{5, 5, 5}));
  EXPECT_TRUE(five.labels.empty());
  EXPECT_EQ(five.tokens, 15);
  EXPECT_EQ(five.dropped_tokens, 0);
  const EncodedSet six = encode_mlm_stream(ds, tok, kSp, 6);  // 4 per sequence: "i" is dropped
  EXPECT_EQ(six.num_sequences, 2);
  EXPECT_EQ(six.ids, (Ids{101, id('a'), id('b'), id('c'), id('d'), 102,  //
                          101, id('e'), id('f'), id('g'), id('h'), 102}));
  EXPECT_EQ(six.dropped_tokens, 1);
  const std::string msg = data_error_of([&] { encode_mlm_stream(ds, tok, kSp, 12); });
  EXPECT_NE(msg.find("mem.csv: the 3 records hold 9 tokens, fewer than one MLM sequence needs "
                     "(block_size 12 - 2 = 10)"),
            std::string::npos)
      << msg;
}

TEST(EncodeClassification, PadsTruncatesAndKeepsLabels) {
  const FakeTokenizer tok;
  const TextDataset ds = dataset({{"ab", 1}, {"", 0}, {"abcdefgh", 0}});
  const EncodedSet set = encode_classification(ds, tok, kSp, 6);  // room for 4 tokens
  EXPECT_EQ(set.num_sequences, 3);
  EXPECT_EQ(set.ids, (Ids{101, id('a'), id('b'), 102, 0, 0,  //
                          101, 102, 0, 0, 0, 0,              //
                          101, id('a'), id('b'), id('c'), id('d'), 102}));
  EXPECT_EQ(set.lengths, (Ids{4, 2, 6}));
  EXPECT_EQ(set.labels, (Ids{1, 0, 0}));
  EXPECT_EQ(set.tokens, 12);
  EXPECT_EQ(set.truncated, 1);
  const std::string msg = data_error_of([&] {
    encode_classification(dataset({{"a", 1}, {"b", -1}}), tok, kSp, 6);
  });
  EXPECT_NE(msg.find("mem.csv:3: record has no label"), std::string::npos) << msg;
}

TEST(MlmPredictionsPerSequence, RoundsFifteenPercentOfTheTokens) {
  EXPECT_EQ(mlm_predictions_per_sequence(128, 0.15), 19);  // round(0.15 * 126 = 18.9)
  EXPECT_EQ(mlm_predictions_per_sequence(64, 0.15), 9);    // round(9.3)
  EXPECT_EQ(mlm_predictions_per_sequence(10, 0.15), 1);    // round(1.2)
  EXPECT_EQ(mlm_predictions_per_sequence(3, 0.15), 1);     // at least one
  EXPECT_THROW(mlm_predictions_per_sequence(2, 0.15), DataError);
  EXPECT_THROW(mlm_predictions_per_sequence(64, 0.0), DataError);
}

// Masking statistics over 6,000 full sequences of T = 64 (P = 9): 54,000 selections. The
// fractions' standard errors are sqrt(0.8 * 0.2 / 54000) = 0.0017 and sqrt(0.1 * 0.9 / 54000) =
// 0.0013, so a tolerance of 0.01 is over 5 sigma; the draws are seeded, so the test is
// deterministic either way.
TEST(MaskSequence, SelectsExactlyPAndSplits80_10_10WhenSequencesAreFull) {
  constexpr int64_t T = 64;
  const int64_t P = mlm_predictions_per_sequence(T, 0.15);
  ASSERT_EQ(P, 9);
  const MlmOptions opt = bert_mlm();
  std::mt19937_64 data_rng(1);
  std::mt19937_64 rng(2);
  Ids ids(T);
  Longs x(T), pos(P), labels(P);
  int64_t selected = 0, masked = 0, random = 0, kept = 0;
  std::vector<int64_t> per_position(T, 0);
  for (int s = 0; s < 6000; ++s) {
    ids[0] = kSp.cls;
    for (int64_t t = 1; t < T - 1; ++t) ids[t] = 1000 + static_cast<int32_t>(data_rng() % 29000);
    ids[T - 1] = kSp.sep;
    mask_sequence(ids.data(), T, T, P, opt, rng, x.data(), pos.data(), labels.data());
    for (int64_t k = 0; k < P; ++k) {
      ASSERT_GE(pos[k], 1) << "selected [CLS]";
      ASSERT_LE(pos[k], T - 2) << "selected [SEP]";
      if (k > 0) ASSERT_LT(pos[k - 1], pos[k]) << "positions ascending and distinct";
      ASSERT_EQ(labels[k], ids[pos[k]]) << "label is the original id";
      ++per_position[pos[k]];
      const int64_t v = x[pos[k]];
      if (v == kSp.mask) {
        ++masked;
      } else if (v == ids[pos[k]]) {
        ++kept;  // includes the 1-in-30522 random draw of the same id
      } else {
        ASSERT_GE(v, 0);
        ASSERT_LT(v, opt.vocab_size);
        ++random;
      }
    }
    selected += P;
    for (int64_t t = 0; t < T; ++t) {
      if (std::find(pos.begin(), pos.end(), t) == pos.end()) ASSERT_EQ(x[t], ids[t]) << t;
    }
  }
  ASSERT_EQ(selected, 54000);
  const double f_mask = static_cast<double>(masked) / selected;
  const double f_random = static_cast<double>(random) / selected;
  const double f_kept = static_cast<double>(kept) / selected;
  EXPECT_NEAR(f_mask, 0.8, 0.01);
  EXPECT_NEAR(f_random, 0.1, 0.01);
  EXPECT_NEAR(f_kept, 0.1, 0.01);
  // Each of the 62 positions is picked 6000 * 9 / 62 = 871 times on average (sd 27).
  EXPECT_EQ(per_position[0] + per_position[T - 1], 0);
  for (int64_t t = 1; t < T - 1; ++t)
    EXPECT_NEAR(per_position[t], 871.0, 130.0) << "position " << t;
}

TEST(MaskSequence, SelectsFewerAndIgnoresTheRestWhenSequenceIsShort) {
  constexpr int64_t T = 16;
  const int64_t P = mlm_predictions_per_sequence(T, 0.5);  // 7
  MlmOptions opt = bert_mlm();
  opt.probability = 0.5;
  // [CLS] 6 tokens [SEP] [PAD]...: 6 maskable positions, round(0.5 * 6) = 3 selected.
  Ids ids = {101, 2000, 2001, 2002, 2003, 2004, 2005, 102, 0, 0, 0, 0, 0, 0, 0, 0};
  std::mt19937_64 rng(3);
  Longs x(T), pos(P), labels(P);
  std::vector<int> hits(T, 0);
  for (int s = 0; s < 2000; ++s) {
    mask_sequence(ids.data(), 8, T, P, opt, rng, x.data(), pos.data(), labels.data());
    for (int64_t k = 0; k < 3; ++k) {
      ++hits[pos[k]];
      ASSERT_EQ(labels[k], ids[pos[k]]);
    }
    for (int64_t k = 3; k < P; ++k) {
      ASSERT_EQ(pos[k], 0);
      ASSERT_EQ(labels[k], kIgnoreLabel);
    }
    for (int64_t t = 8; t < T; ++t) ASSERT_EQ(x[t], 0) << "padding untouched";
  }
  EXPECT_EQ(hits[0] + hits[7], 0);  // never [CLS] or [SEP]
  for (int64_t t = 8; t < T; ++t) EXPECT_EQ(hits[t], 0) << "never [PAD]";
  for (int64_t t = 1; t < 7; ++t) EXPECT_GT(hits[t], 0);
}

TEST(MlmSampler, FillsTheSameMasksForTheSameBatchIndex) {
  constexpr int64_t T = 34;  // 32 tokens: P = round(0.15 * 32 = 4.8) = 5
  const FakeTokenizer tok;
  const TextDataset ds = dataset({{std::string(400, 'a') + std::string(400, 'z'), -1}});
  const EncodedSet set = encode_mlm_stream(ds, tok, kSp, T);
  ASSERT_EQ(set.num_sequences, 25);  // 800 / 32
  const auto sampler = make_mlm_sampler(set, 4, bert_mlm(), SampleOrder::kRandom, 11);
  const BatchLayout l = sampler->layout();
  EXPECT_EQ(l.batch_size, 4);
  EXPECT_EQ(l.block_size, T);
  EXPECT_EQ(l.y_cols, 5);
  EXPECT_TRUE(l.has_mask);
  EXPECT_EQ(l.pos_cols, 5);
  Batch a(l), b(l), c(l);
  a.fill(*sampler, 7);
  b.fill(*sampler, 7);
  c.fill(*sampler, 8);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.pos, b.pos);
  EXPECT_NE(a.x, c.x);
  EXPECT_EQ(a.mask, Longs(4 * T, 1));  // full sequences
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(a.x[r * T], 101);
    EXPECT_EQ(a.x[r * T + T - 1], 102);
    for (int64_t k = 0; k < 5; ++k) {  // labels are the stream's letters at real positions
      const int64_t y = a.y[r * 5 + k];
      EXPECT_TRUE(y == id('a') || y == id('z')) << y;
      EXPECT_GE(a.pos[r * 5 + k], 1);
      EXPECT_LE(a.pos[r * 5 + k], T - 2);
    }
  }
}

TEST(MlmSampler, CoversTheSetOnceAndIgnoresPaddingRowsWhenSequential) {
  const FakeTokenizer tok;
  const EncodedSet set = encode_mlm_stream(dataset({{std::string(70, 'q'), -1}}), tok, kSp, 16);
  ASSERT_EQ(set.num_sequences, 5);  // 70 tokens / 14
  EXPECT_EQ(sequential_batches(set, 2), 3);
  const auto sampler = make_mlm_sampler(set, 2, bert_mlm(), SampleOrder::kSequential, 1);
  const int64_t P = sampler->layout().y_cols;
  ASSERT_EQ(P, 2);  // round(0.15 * 14 = 2.1)
  Batch last(sampler->layout());
  last.fill(*sampler, 2);  // rows: sequence 4, then padding (sequence 0)
  EXPECT_EQ(last.y[0], id('q'));
  EXPECT_EQ(last.y[1], id('q'));
  EXPECT_EQ(last.y[P], kIgnoreLabel);
  EXPECT_EQ(last.y[P + 1], kIgnoreLabel);
}

TEST(ClassifySampler, LaysOutIdsMaskAndLabels) {
  const FakeTokenizer tok;
  const EncodedSet set = encode_classification(
      dataset({{"ab", 1}, {"c", 0}, {"de", 1}, {"f", 0}, {"gh", 1}}), tok, kSp, 5);
  EXPECT_EQ(sequential_batches(set, 2), 3);
  const auto seq = make_classify_sampler(set, 2, SampleOrder::kSequential, 9);
  const BatchLayout l = seq->layout();
  EXPECT_EQ(l.y_cols, 1);
  EXPECT_TRUE(l.has_mask);
  EXPECT_EQ(l.pos_cols, 0);
  Longs all_y;
  for (int64_t i = 0; i < 3; ++i) {
    Batch b(l);
    b.fill(*seq, i);
    all_y.insert(all_y.end(), b.y.begin(), b.y.end());
    if (i == 0) {
      EXPECT_EQ(b.x, (Longs{101, id('a'), id('b'), 102, 0, 101, id('c'), 102, 0, 0}));
      EXPECT_EQ(b.mask, (Longs{1, 1, 1, 1, 0, 1, 1, 1, 0, 0}));
    }
    if (i == 2) {  // sequence 4, then sequence 0 as padding
      EXPECT_EQ(b.x, (Longs{101, id('g'), id('h'), 102, 0, 101, id('a'), id('b'), 102, 0}));
    }
  }
  EXPECT_EQ(all_y, (Longs{1, 0, 1, 0, 1, kIgnoreLabel}));  // each label once, then ignored
  // Random order: rows are whole sequences with their own labels, the same for the same index.
  const auto rnd = make_classify_sampler(set, 8, SampleOrder::kRandom, 9);
  Batch r1(rnd->layout()), r2(rnd->layout());
  r1.fill(*rnd, 4);
  r2.fill(*rnd, 4);
  EXPECT_EQ(r1.x, r2.x);
  for (int64_t r = 0; r < 8; ++r) {
    const int64_t first = r1.x[r * 5 + 1];
    const int64_t want = (first == id('a') || first == id('d') || first == id('g')) ? 1 : 0;
    EXPECT_EQ(r1.y[r], want) << "row " << r;
  }
}

TEST(Samplers, ThrowWhenArgumentsDoNotFit) {
  const FakeTokenizer tok;
  const EncodedSet mlm = encode_mlm_stream(dataset({{std::string(40, 'q'), -1}}), tok, kSp, 10);
  MlmOptions opt = bert_mlm();
  opt.mask_fraction = 0.95;  // + 0.1 > 1
  EXPECT_THROW(make_mlm_sampler(mlm, 2, opt, SampleOrder::kRandom, 1), DataError);
  opt = bert_mlm();
  opt.vocab_size = 0;
  EXPECT_THROW(make_mlm_sampler(mlm, 2, opt, SampleOrder::kRandom, 1), DataError);
  EXPECT_THROW(make_mlm_sampler(mlm, 0, bert_mlm(), SampleOrder::kRandom, 1), DataError);
  const std::string msg =
      data_error_of([&] { make_classify_sampler(mlm, 2, SampleOrder::kRandom, 1); });
  EXPECT_NE(msg.find("0 labels for 5 sequences"), std::string::npos) << msg;
}

}  // namespace
}  // namespace llmprof::data
