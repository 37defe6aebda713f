// Encoder inputs: WordPiece-encoded sequences of fixed length T and the batch samplers that turn
// them into loader batches.
// - MLM: the records' tokens are concatenated (as Hugging Face run_mlm's group_texts) and cut into
//   sequences [CLS] + (T - 2) tokens + [SEP]; the last partial chunk is dropped. Masking as BERT's
//   create_pretraining_data.py: exactly P = max(1, round(p * n)) of the n maskable (non-special,
//   non-padding) positions are selected per sequence (p = 0.15); of those 80% become [MASK], 10% a
//   random token, 10% stay; the loss is taken only at the selected positions.
// - Classification: one record per sequence, [CLS] + tokens truncated to T - 2 + [SEP], padded
//   with [PAD] to T; the attention mask is 1 on real tokens.
// Every buffer is fixed-shape so loader slots are preallocated and the step never reallocates.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "llmprof/data/loader.h"
#include "llmprof/data/wordpiece.h"

namespace llmprof::data {

struct TextDataset;

inline constexpr int64_t kIgnoreLabel = -100;  // label of positions/rows that take no loss

struct EncodedSet {
  int64_t block_size = 0;          // T
  int64_t num_sequences = 0;       // N
  std::vector<int32_t> ids;        // (N, T) row-major, padded with [PAD]
  std::vector<int32_t> lengths;    // (N,) real tokens including [CLS] and [SEP]
  std::vector<int32_t> labels;     // (N,) class labels; empty for MLM
  int64_t tokens = 0;              // real tokens in all sequences
  int64_t truncated = 0;           // classification: records cut to fit T
  int64_t dropped_tokens = 0;      // MLM: tokens of the last partial chunk
};

// MLM sequences from a dataset's records. Throws DataError (naming the dataset path) when the
// records hold fewer than T - 2 tokens.
EncodedSet encode_mlm_stream(const TextDataset& ds, const Tokenizer& tok, const SpecialTokens& sp,
                             int64_t block_size);

// One padded sequence per labelled record. Throws DataError when a record has no label.
EncodedSet encode_classification(const TextDataset& ds, const Tokenizer& tok,
                                 const SpecialTokens& sp, int64_t block_size);

struct MlmOptions {
  double probability = 0.15;     // fraction of maskable positions selected
  double mask_fraction = 0.8;    // of selected: -> [MASK]
  double random_fraction = 0.1;  // of selected: -> uniform random token in [0, vocab_size)
  int64_t vocab_size = 0;        // for random replacement
  SpecialTokens special;
};

// P, the predictions per full sequence of length T: max(1, round(probability * (T - 2))).
int64_t mlm_predictions_per_sequence(int64_t block_size, double probability);

// Masks one sequence of `length` real tokens (ids has T entries): writes x (T) = ids with the
// replacements, pos (P) = selected positions ascending, labels (P) = original ids there;
// unused trailing entries of pos/labels (short sequences) are 0 / kIgnoreLabel.
void mask_sequence(const int32_t* ids, int32_t length, int64_t block_size, int64_t predictions,
                   const MlmOptions& opt, std::mt19937_64& rng, int64_t* x, int64_t* pos,
                   int64_t* labels);

// Batch order for the samplers below.
enum class SampleOrder {
  kRandom,      // training: each row a sequence drawn uniformly with an rng seeded by (seed, the
                // row's global sample index, loader.h Shard)
  kSequential,  // evaluation: row b of batch i holds the sequence of its global sample index
                // (one rank: sequences [i*B, (i+1)*B)); rows past N repeat
                // sequence 0 with every label kIgnoreLabel, so they add no loss
};

// Layout: x (B, T) ids after masking, mask (B, T), y (B, P) labels, pos (B, P) positions.
// Each row's masking rng is seeded by (seed, its global sample index): the same sample gets the
// same masks every time, on whichever rank. set must outlive the sampler. Throws DataError for
// an empty set, B < 1, bad fractions or a shard outside [0, world_size).
std::unique_ptr<BatchSampler> make_mlm_sampler(const EncodedSet& set, int64_t batch_size,
                                               const MlmOptions& opt, SampleOrder order,
                                               uint64_t seed, Shard shard = {});

// Layout: x (B, T) ids, mask (B, T), y (B, 1) labels. set (with labels) must outlive the sampler.
std::unique_ptr<BatchSampler> make_classify_sampler(const EncodedSet& set, int64_t batch_size,
                                                    SampleOrder order, uint64_t seed,
                                                    Shard shard = {});

// Batches a sequential sampler needs to cover the set once: ceil(N / B).
int64_t sequential_batches(const EncodedSet& set, int64_t batch_size);

}  // namespace llmprof::data
