// Encoder inputs: fixed-shape WordPiece sequences and the MLM / classification batch samplers.
// Every draw comes from raw mt19937_64 output through rng.h (no std:: distributions), so a seed
// gives the same sequences, masks and batches with any standard library.
#include "llmprof/data/encoder_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "llmprof/data/text_dataset.h"
#include "llmprof/error.h"
#include "rng.h"

namespace llmprof::data {

namespace {

// T must leave room for [CLS], at least one token and [SEP].
void check_block_size(const char* who, int64_t block_size) {
  if (block_size < 3) {
    throw DataError(std::string(who) + ": block_size must be >= 3 ([CLS] + tokens + [SEP]), got " +
                    std::to_string(block_size));
  }
}

// A uniform double in [0, 1) from the top 53 bits of one draw.
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A position BERT may select: a real token, not [CLS], [SEP], [PAD] or [MASK] ([UNK] may be
// selected, as in create_pretraining_data.py, which skips only [CLS] and [SEP]).
bool maskable(int32_t id, const SpecialTokens& sp) {
  return id != sp.cls && id != sp.sep && id != sp.pad && id != sp.mask;
}

void check_set(const char* who, const EncodedSet& set, int64_t batch_size) {
  if (batch_size < 1) {
    throw DataError(std::string(who) + ": batch_size must be >= 1, got " +
                    std::to_string(batch_size));
  }
  if (set.num_sequences < 1) throw DataError(std::string(who) + ": the encoded set is empty");
  check_block_size(who, set.block_size);
}

// Row b of a sampler's batch: the sequence it holds, and whether it is padding (a sequential
// batch past the end of the set: sequence 0, every label ignored). `sample` is the row's global
// sample index (loader.h Shard); rng was seeded by it.
int64_t pick_sequence(const EncodedSet& set,
                      SampleOrder order,
                      int64_t sample,
                      std::mt19937_64& rng,
                      bool* padding) {
  *padding = false;
  if (order == SampleOrder::kRandom) {
    return static_cast<int64_t>(
        detail::uniform_below(rng, static_cast<uint64_t>(set.num_sequences)));
  }
  if (sample < set.num_sequences) return sample;
  *padding = true;
  return 0;
}

// mask (T,): 1 on the first `length` positions, 0 on padding.
void fill_mask(int64_t length, int64_t block_size, int64_t* mask) {
  for (int64_t t = 0; t < block_size; ++t) mask[t] = t < length ? 1 : 0;
}

// Layout: x (B, T), mask (B, T), y (B, P), pos (B, P).
class MlmSampler final : public BatchSampler {
 public:
  MlmSampler(const EncodedSet& set,
             int64_t batch_size,
             const MlmOptions& opt,
             SampleOrder order,
             uint64_t seed,
             Shard shard)
      : set_(set), opt_(opt), order_(order), seed_(seed), shard_(shard) {
    layout_.batch_size = batch_size;
    layout_.block_size = set.block_size;
    layout_.y_cols = mlm_predictions_per_sequence(set.block_size, opt.probability);
    layout_.has_mask = true;
    layout_.pos_cols = layout_.y_cols;
  }

  BatchLayout layout() const override { return layout_; }

  void fill(int64_t index, const BatchBuffers& out) const override {
    const int64_t T = layout_.block_size;
    const int64_t P = layout_.y_cols;
    for (int64_t b = 0; b < layout_.batch_size; ++b) {
      const int64_t sample = global_sample_index(shard_, layout_.batch_size, index, b);
      std::mt19937_64 rng(detail::sample_seed(seed_, sample));
      bool padding = false;
      const int64_t s = pick_sequence(set_, order_, sample, rng, &padding);
      const int32_t length = set_.lengths[static_cast<size_t>(s)];
      int64_t* y = out.y + b * P;
      mask_sequence(set_.ids.data() + s * T, length, T, P, opt_, rng, out.x + b * T,
                    out.pos + b * P, y);
      if (padding) std::fill(y, y + P, kIgnoreLabel);
      fill_mask(length, T, out.mask + b * T);
    }
  }

 private:
  const EncodedSet& set_;
  MlmOptions opt_;
  SampleOrder order_;
  uint64_t seed_;
  Shard shard_;
  BatchLayout layout_;
};

// Layout: x (B, T), mask (B, T), y (B, 1).
class ClassifySampler final : public BatchSampler {
 public:
  ClassifySampler(const EncodedSet& set, int64_t batch_size, SampleOrder order, uint64_t seed,
                  Shard shard)
      : set_(set), order_(order), seed_(seed), shard_(shard) {
    layout_.batch_size = batch_size;
    layout_.block_size = set.block_size;
    layout_.y_cols = 1;
    layout_.has_mask = true;
  }

  BatchLayout layout() const override { return layout_; }

  void fill(int64_t index, const BatchBuffers& out) const override {
    const int64_t T = layout_.block_size;
    for (int64_t b = 0; b < layout_.batch_size; ++b) {
      const int64_t sample = global_sample_index(shard_, layout_.batch_size, index, b);
      std::mt19937_64 rng(detail::sample_seed(seed_, sample));
      bool padding = false;
      const int64_t s = pick_sequence(set_, order_, sample, rng, &padding);
      const int32_t* ids = set_.ids.data() + s * T;
      std::copy(ids, ids + T, out.x + b * T);
      fill_mask(set_.lengths[static_cast<size_t>(s)], T, out.mask + b * T);
      out.y[b] = padding ? kIgnoreLabel : set_.labels[static_cast<size_t>(s)];
    }
  }

 private:
  const EncodedSet& set_;
  SampleOrder order_;
  uint64_t seed_;
  Shard shard_;
  BatchLayout layout_;
};

}  // namespace

EncodedSet encode_mlm_stream(const TextDataset& ds,
                             const Tokenizer& tok,
                             const SpecialTokens& sp,
                             int64_t block_size) {
  check_block_size("encode_mlm_stream", block_size);
  std::vector<int32_t> stream;  // every record's tokens, back to back (run_mlm's group_texts)
  for (const TextRecord& r : ds.records) {
    const std::vector<int32_t> ids = tok.encode(r.text);
    stream.insert(stream.end(), ids.begin(), ids.end());
  }
  const int64_t chunk = block_size - 2;
  const auto total = static_cast<int64_t>(stream.size());
  EncodedSet set;
  set.block_size = block_size;
  set.num_sequences = total / chunk;
  if (set.num_sequences == 0) {
    throw DataError(ds.path + ": the " + std::to_string(ds.records.size()) + " records hold " +
                    std::to_string(total) +
                    " tokens, fewer than one MLM sequence needs (block_size " +
                    std::to_string(block_size) + " - 2 = " + std::to_string(chunk) + ")");
  }
  const auto N = static_cast<size_t>(set.num_sequences);
  const auto T = static_cast<size_t>(block_size);
  set.ids.resize(N * T);
  set.lengths.assign(N, static_cast<int32_t>(block_size));
  for (size_t i = 0; i < N; ++i) {  // row i: [CLS] stream[i*C, (i+1)*C) [SEP]
    int32_t* row = set.ids.data() + i * T;
    row[0] = sp.cls;
    std::copy_n(stream.data() + i * static_cast<size_t>(chunk), chunk, row + 1);
    row[T - 1] = sp.sep;
  }
  set.tokens = set.num_sequences * block_size;
  set.dropped_tokens = total - set.num_sequences * chunk;
  return set;
}

EncodedSet encode_classification(const TextDataset& ds,
                                 const Tokenizer& tok,
                                 const SpecialTokens& sp,
                                 int64_t block_size) {
  check_block_size("encode_classification", block_size);
  if (ds.records.empty()) throw DataError(ds.path + ": no records to encode");
  const auto T = static_cast<size_t>(block_size);
  EncodedSet set;
  set.block_size = block_size;
  set.num_sequences = static_cast<int64_t>(ds.records.size());
  set.ids.assign(ds.records.size() * T, sp.pad);
  set.lengths.reserve(ds.records.size());
  set.labels.reserve(ds.records.size());
  for (size_t i = 0; i < ds.records.size(); ++i) {
    const TextRecord& r = ds.records[i];
    if (r.label < 0) {
      throw DataError(ds.path + ":" + std::to_string(r.line) +
                      ": record has no label (classification reads a label column)");
    }
    const std::vector<int32_t> ids = tok.encode(r.text);
    const size_t n = std::min(ids.size(), T - 2);
    set.truncated += ids.size() > n;
    int32_t* row = set.ids.data() + i * T;  // [CLS] tokens[:T-2] [SEP] [PAD]...
    row[0] = sp.cls;
    std::copy_n(ids.data(), n, row + 1);
    row[n + 1] = sp.sep;
    set.lengths.push_back(static_cast<int32_t>(n + 2));
    set.labels.push_back(r.label);
    set.tokens += static_cast<int64_t>(n + 2);
  }
  return set;
}

int64_t mlm_predictions_per_sequence(int64_t block_size, double probability) {
  check_block_size("mlm_predictions_per_sequence", block_size);
  if (!(probability > 0.0 && probability <= 1.0)) {
    throw DataError("MLM probability must be in (0, 1], got " + fmt::format("{:g}", probability));
  }
  return std::max<int64_t>(1, std::llround(probability * static_cast<double>(block_size - 2)));
}

void mask_sequence(const int32_t* ids,
                   int32_t length,
                   int64_t block_size,
                   int64_t predictions,
                   const MlmOptions& opt,
                   std::mt19937_64& rng,
                   int64_t* x,
                   int64_t* pos,
                   int64_t* labels) {
  for (int64_t t = 0; t < block_size; ++t) x[t] = ids[t];
  std::fill(pos, pos + predictions, 0);
  std::fill(labels, labels + predictions, kIgnoreLabel);
  const int64_t last = std::min<int64_t>(length, block_size) - 1;  // [SEP] of a full sequence
  int64_t n = 0;                                                   // maskable positions
  for (int64_t t = 1; t < last; ++t) n += maskable(ids[t], opt.special);
  if (n == 0) return;
  const int64_t want =
      std::min({predictions, n,
                std::max<int64_t>(1, std::llround(opt.probability * static_cast<double>(n)))});
  // Selection sampling (Knuth's Algorithm S): candidate j of the `left` still to visit is taken
  // with probability (want - k) / left, which picks a uniform `want`-subset, already ascending.
  int64_t k = 0;
  int64_t left = n;
  for (int64_t t = 1; t < last && k < want; ++t) {
    if (!maskable(ids[t], opt.special)) continue;
    if (static_cast<int64_t>(detail::uniform_below(rng, static_cast<uint64_t>(left))) < want - k) {
      pos[k] = t;
      labels[k] = ids[t];
      ++k;
    }
    --left;
  }
  // 80/10/10: one uniform u per selected position; u < mask_fraction -> [MASK], then the next
  // random_fraction of [0, 1) -> a random token (random_fraction / (1 - mask_fraction) of the
  // rest), else the token stays.
  for (int64_t j = 0; j < k; ++j) {
    const double u = uniform01(rng);
    if (u < opt.mask_fraction) {
      x[pos[j]] = opt.special.mask;
    } else if (u < opt.mask_fraction + opt.random_fraction) {
      x[pos[j]] =
          static_cast<int64_t>(detail::uniform_below(rng, static_cast<uint64_t>(opt.vocab_size)));
    }
  }
}

std::unique_ptr<BatchSampler> make_mlm_sampler(const EncodedSet& set,
                                               int64_t batch_size,
                                               const MlmOptions& opt,
                                               SampleOrder order,
                                               uint64_t seed,
                                               Shard shard) {
  check_set("make_mlm_sampler", set, batch_size);
  detail::check_shard("make_mlm_sampler", shard.rank, shard.world_size);
  if (!(opt.mask_fraction >= 0.0 && opt.random_fraction >= 0.0 &&
        opt.mask_fraction + opt.random_fraction <= 1.0)) {
    throw DataError("make_mlm_sampler: mask_fraction " + fmt::format("{:g}", opt.mask_fraction) +
                    " and random_fraction " + fmt::format("{:g}", opt.random_fraction) +
                    " must be >= 0 with a sum <= 1");
  }
  if (opt.random_fraction > 0.0 && opt.vocab_size < 1) {
    throw DataError("make_mlm_sampler: random_fraction " + fmt::format("{:g}", opt.random_fraction) +
                    " needs vocab_size >= 1, got " + std::to_string(opt.vocab_size));
  }
  return std::make_unique<MlmSampler>(set, batch_size, opt, order, seed, shard);
}

std::unique_ptr<BatchSampler> make_classify_sampler(const EncodedSet& set,
                                                    int64_t batch_size,
                                                    SampleOrder order,
                                                    uint64_t seed,
                                                    Shard shard) {
  check_set("make_classify_sampler", set, batch_size);
  detail::check_shard("make_classify_sampler", shard.rank, shard.world_size);
  if (set.labels.size() != static_cast<size_t>(set.num_sequences)) {
    throw DataError("make_classify_sampler: the set has " + std::to_string(set.labels.size()) +
                    " labels for " + std::to_string(set.num_sequences) +
                    " sequences (an MLM set?)");
  }
  return std::make_unique<ClassifySampler>(set, batch_size, order, seed, shard);
}

int64_t sequential_batches(const EncodedSet& set, int64_t batch_size) {
  if (batch_size < 1) {
    throw DataError("sequential_batches: batch_size must be >= 1, got " +
                    std::to_string(batch_size));
  }
  return (set.num_sequences + batch_size - 1) / batch_size;
}

}  // namespace llmprof::data
