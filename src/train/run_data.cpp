#include "llmprof/train/run_data.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/corpus.h"
#include "llmprof/data/text_dataset.h"
#include "llmprof/data/wordpiece.h"
#include "llmprof/error.h"

namespace llmprof::train {

namespace {

// ---------------------------------------------------------------------------------------------
// lm: nanoGPT's token stream.

// Non-overlapping windows of a token stream in order: row k of the pass is
// x = tokens[k*T : k*T + T], y = tokens[k*T + 1 : k*T + T + 1]; rows past the last window repeat
// window 0 with every target ignored, so a short last batch adds no loss.
class SequentialWindowSampler : public data::BatchSampler {
 public:
  SequentialWindowSampler(const std::vector<int32_t>& tokens, int64_t B, int64_t T)
      : tokens_(tokens), B_(B), T_(T),
        windows_((static_cast<int64_t>(tokens.size()) - 1) / T) {}
  // Only the listed windows (ascending), in that order.
  SequentialWindowSampler(const std::vector<int32_t>& tokens, int64_t B, int64_t T,
                          std::vector<int64_t> windows)
      : tokens_(tokens), B_(B), T_(T), windows_(static_cast<int64_t>(windows.size())),
        chosen_(std::move(windows)) {}
  data::BatchLayout layout() const override { return {B_, T_, T_, false, 0}; }
  void fill(int64_t index, const data::BatchBuffers& out) const override {
    for (int64_t r = 0; r < B_; ++r) {
      const int64_t k = index * B_ + r;
      const bool real = k < windows_;
      const int64_t window = chosen_.empty() ? k : chosen_[static_cast<size_t>(real ? k : 0)];
      const int64_t start = (real ? window : chosen_.empty() ? 0 : chosen_[0]) * T_;
      for (int64_t t = 0; t < T_; ++t) {
        out.x[r * T_ + t] = tokens_[static_cast<size_t>(start + t)];
        out.y[r * T_ + t] = real ? tokens_[static_cast<size_t>(start + t + 1)] : data::kIgnoreLabel;
      }
    }
  }
  int64_t batches() const { return (windows_ + B_ - 1) / B_; }
  int64_t windows() const { return windows_; }

 private:
  const std::vector<int32_t>& tokens_;
  int64_t B_, T_, windows_;
  std::vector<int64_t> chosen_;  // empty = every window
};

// n of the indices 0..available-1, drawn uniformly without replacement (a partial Fisher-Yates
// on raw mt19937_64 output), returned ascending.
std::vector<int64_t> random_subset(int64_t available, int64_t n, uint64_t seed) {
  std::vector<int64_t> idx(static_cast<size_t>(available));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    const auto j = i + static_cast<int64_t>(rng() % static_cast<uint64_t>(available - i));
    std::swap(idx[static_cast<size_t>(i)], idx[static_cast<size_t>(j)]);
  }
  idx.resize(static_cast<size_t>(n));
  std::sort(idx.begin(), idx.end());
  return idx;
}

// Seed of an eval set's subset: the run's seed and the set's name, so each set draws its own.
uint64_t subset_seed(const config::Config& cfg, const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return static_cast<uint64_t>(cfg.train.seed) ^ h;
}

// How many sequences a limited set uses, and the note that says how they were drawn ("" when the
// whole set is used).
int64_t subset_size(int64_t available, int64_t batch_size, int64_t max_batches) {
  if (max_batches <= 0) return available;
  return std::min(available, max_batches * batch_size);
}
std::string subset_note(int64_t used, int64_t available, int64_t max_batches, int64_t batch_size,
                        const char* unit) {
  if (used >= available) return "";
  return fmt::format("a seeded random {} of the {} {} (eval.max_batches={} x batch {}), in file "
                     "order",
                     used, available, unit, max_batches, batch_size);
}

// Batches 0..n-1 of a sampler, copied into owned tensors.
std::vector<Batch> take_batches(const data::BatchSampler& sampler, int64_t n) {
  std::vector<Batch> batches;
  batches.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) batches.push_back(make_batch(sampler, i));
  return batches;
}

void load_lm_data(const config::Config& cfg, RunData& rd, data::Shard shard) {
  std::string text;
  if (cfg.data.path.empty()) {
    text = data::generate_corpus(static_cast<uint64_t>(cfg.train.seed), cfg.data.generated_chars);
    rd.source = fmt::format("generated(seed={}, chars={})", cfg.train.seed, cfg.data.generated_chars);
  } else {
    text = data::read_file_maybe_gzip(cfg.data.path);
    rd.source = cfg.data.path;
  }
  rd.corpus_bytes = static_cast<int64_t>(text.size());
  rd.tokenizer = data::make_tokenizer(cfg.data, text);
  std::vector<int32_t> tokens = rd.tokenizer->encode(text);
  rd.splits = data::split_tokens(tokens, cfg.data.val_fraction, cfg.model.block_size);
  rd.train_sampler = data::make_window_sampler(rd.splits.train, cfg.train.batch_size,
                                               cfg.model.block_size,
                                               static_cast<uint64_t>(cfg.train.seed), shard);
  rd.description = fmt::format("{} train / {} val tokens", rd.splits.train.size(),
                               rd.splits.val.size());
  rd.figures.corpus = rundir::CorpusFigures{rd.source, rd.corpus_bytes,
                                            static_cast<int64_t>(rd.splits.train.size()),
                                            static_cast<int64_t>(rd.splits.val.size())};
}

// ---------------------------------------------------------------------------------------------
// mlm / classify: dataset files as fixed-length encoder sequences.

data::TextReadOptions read_options(const config::Config& cfg, int64_t max_records, uint64_t seed) {
  data::TextReadOptions o;
  o.format = cfg.data.format;
  o.jsonl_fields = config::split_list(cfg.data.jsonl_fields);
  o.text_column = cfg.data.text_column;
  if (cfg.train.task == config::TaskKind::kClassify) {
    o.label_column = cfg.data.label_column;
    o.num_labels = cfg.model.num_labels;
  }
  o.max_records = max_records;
  o.seed = seed;
  return o;
}

// Logs a warning naming the file, the count and the first bad row, when there are bad rows.
void warn_bad_rows(const data::TextDataset& ds) {
  if (ds.bad_rows > 0) {
    const data::BadRow& first = ds.bad_row_examples.front();
    spdlog::warn("data: {} of {} rows of {} were bad and skipped (first: line {}: {}); "
                 "summary.json lists the first {}",
                 ds.bad_rows, ds.rows_read, ds.path, first.line, first.reason,
                 ds.bad_row_examples.size());
  }
}

// The summary.json entry of one dataset file (and the bad-row warning).
rundir::DataFileFigures dataset_figures(const data::TextDataset& ds) {
  warn_bad_rows(ds);
  rundir::DataFileFigures f{ds.path, std::string(config::name(ds.format)), ds.rows_read,
                            static_cast<int64_t>(ds.records.size()), ds.bad_rows, {}};
  for (const data::BadRow& b : ds.bad_row_examples) {
    f.bad_row_examples.push_back({b.line, b.reason});
  }
  return f;
}

data::EncodedSet encode(const config::Config& cfg, const RunData& rd, const data::TextDataset& ds) {
  return cfg.train.task == config::TaskKind::kMlm
             ? data::encode_mlm_stream(ds, *rd.tokenizer, rd.special, cfg.model.block_size)
             : data::encode_classification(ds, *rd.tokenizer, rd.special, cfg.model.block_size);
}

// Moves the rows listed in `rows` (in that order) of `from` into a new set.
data::EncodedSet take_rows(const data::EncodedSet& from, const std::vector<int64_t>& rows) {
  data::EncodedSet out;
  out.block_size = from.block_size;
  out.num_sequences = static_cast<int64_t>(rows.size());
  const int64_t T = from.block_size;
  for (int64_t r : rows) {
    out.ids.insert(out.ids.end(), from.ids.begin() + r * T, from.ids.begin() + (r + 1) * T);
    out.lengths.push_back(from.lengths[static_cast<size_t>(r)]);
    if (!from.labels.empty()) out.labels.push_back(from.labels[static_cast<size_t>(r)]);
    out.tokens += from.lengths[static_cast<size_t>(r)];
  }
  return out;
}

// Splits off the tail data.val_fraction of the sequences as validation: in order for mlm
// (contiguous text), after a seeded shuffle for classify (files are often sorted by label).
void split_validation(const config::Config& cfg, RunData& rd) {
  const data::EncodedSet all = std::move(rd.train_set);
  std::vector<int64_t> order(static_cast<size_t>(all.num_sequences));
  std::iota(order.begin(), order.end(), 0);
  if (cfg.train.task == config::TaskKind::kClassify) {
    std::mt19937_64 rng(static_cast<uint64_t>(cfg.train.seed) + 3);
    std::shuffle(order.begin(), order.end(), rng);
  }
  const auto n_val = static_cast<int64_t>(
      std::floor(cfg.data.val_fraction * static_cast<double>(all.num_sequences)));
  const int64_t n_train = all.num_sequences - n_val;
  if (n_val < 1 || n_train < 1) {
    throw DataError(fmt::format("{}: {} sequences of {} tokens cannot be split {:.3g}/{:.3g} into "
                                "train and validation; add data, set data.val_path or change "
                                "data.val_fraction",
                                cfg.data.path, all.num_sequences, cfg.model.block_size,
                                1 - cfg.data.val_fraction, cfg.data.val_fraction));
  }
  rd.train_set = take_rows(all, {order.begin(), order.begin() + n_train});
  rd.val_set = take_rows(all, {order.begin() + n_train, order.end()});
}

data::MlmOptions mlm_options(const config::Config& cfg, const RunData& rd) {
  data::MlmOptions o;
  o.probability = cfg.data.mlm_probability;
  o.vocab_size = rd.tokenizer->vocab_size();
  o.special = rd.special;
  return o;
}

std::unique_ptr<data::BatchSampler> encoder_sampler(const config::Config& cfg, const RunData& rd,
                                                    const data::EncodedSet& set, int64_t B,
                                                    data::SampleOrder order, uint64_t seed,
                                                    data::Shard shard = {}) {
  if (cfg.train.task == config::TaskKind::kMlm) {
    return data::make_mlm_sampler(set, B, mlm_options(cfg, rd), order, seed, shard);
  }
  return data::make_classify_sampler(set, B, order, seed, shard);
}

void load_encoder_data(const config::Config& cfg, RunData& rd, data::Shard shard) {
  auto wp = data::make_wordpiece_tokenizer(cfg.data.vocab_path, cfg.data.lower_case);
  rd.special = wp->special();
  rd.tokenizer = std::move(wp);
  const auto seed = static_cast<uint64_t>(cfg.train.seed);
  const data::TextDataset train =
      data::read_text_dataset(cfg.data.path, read_options(cfg, cfg.data.max_examples, seed));
  rd.source = cfg.data.path;
  for (const data::TextRecord& r : train.records) rd.corpus_bytes += static_cast<int64_t>(r.text.size());
  rundir::DatasetFigures& fig = rd.figures.datasets.emplace();
  fig.train_file = dataset_figures(train);
  rd.train_set = encode(cfg, rd, train);
  if (cfg.data.val_path.empty()) {
    split_validation(cfg, rd);
    const bool shuffled = cfg.train.task == config::TaskKind::kClassify;
    fig.val_split = fmt::format("tail {} of the sequences{}", cfg.data.val_fraction,
                                shuffled ? " after a seeded shuffle" : "");
  } else {
    const data::TextDataset val = data::read_text_dataset(
        cfg.data.val_path, read_options(cfg, cfg.data.val_max_examples, seed + 1));
    fig.val_file = dataset_figures(val);
    rd.val_set = encode(cfg, rd, val);
  }
  fig.train_sequences = rd.train_set.num_sequences;
  fig.train_tokens = rd.train_set.tokens;
  fig.train_truncated = rd.train_set.truncated;
  fig.val_sequences = rd.val_set.num_sequences;
  fig.val_tokens = rd.val_set.tokens;
  fig.val_truncated = rd.val_set.truncated;
  if (cfg.train.task == config::TaskKind::kMlm) {
    rd.mlm_predictions = data::mlm_predictions_per_sequence(cfg.model.block_size,
                                                            cfg.data.mlm_probability);
    fig.mlm_predictions_per_sequence = rd.mlm_predictions;
  }
  rd.train_sampler = encoder_sampler(cfg, rd, rd.train_set, cfg.train.batch_size,
                                     data::SampleOrder::kRandom, seed, shard);
  rd.description = fmt::format("{} train / {} val sequences of {} tokens ({} / {} real tokens{})",
                               rd.train_set.num_sequences, rd.val_set.num_sequences,
                               cfg.model.block_size, rd.train_set.tokens, rd.val_set.tokens,
                               cfg.train.task == config::TaskKind::kClassify
                                   ? fmt::format(", {} train records truncated", rd.train_set.truncated)
                                   : "");
}

// The windows of an lm eval stream: all in order, or a seeded random subset of them.
void fill_window_set(EvalSet& set, const config::Config& cfg, const std::vector<int32_t>& tokens,
                     int64_t batch_size, int64_t max_batches) {
  const int64_t T = cfg.model.block_size;
  const int64_t available = (static_cast<int64_t>(tokens.size()) - 1) / T;
  set.available = available;
  set.used = subset_size(available, batch_size, max_batches);
  set.sampling = subset_note(set.used, available, max_batches, batch_size, "windows");
  if (set.sampling.empty()) {
    SequentialWindowSampler sampler(tokens, batch_size, T);
    set.batches = take_batches(sampler, sampler.batches());
    return;
  }
  SequentialWindowSampler sampler(tokens, batch_size, T,
                                  random_subset(available, set.used, subset_seed(cfg, set.name)));
  set.batches = take_batches(sampler, sampler.batches());
}

// The sequences of an encoder eval set: all in order, or a seeded random subset of them.
void fill_encoder_set(EvalSet& set, const config::Config& cfg, const RunData& rd,
                      const data::EncodedSet& all, int64_t batch_size, int64_t max_batches) {
  set.available = all.num_sequences;
  set.used = subset_size(all.num_sequences, batch_size, max_batches);
  set.sampling = subset_note(set.used, set.available, max_batches, batch_size, "sequences");
  const auto seed = static_cast<uint64_t>(cfg.train.seed) + 2;  // MLM masks, as before
  if (set.sampling.empty()) {
    auto sampler = encoder_sampler(cfg, rd, all, batch_size, data::SampleOrder::kSequential, seed);
    set.batches = take_batches(*sampler, data::sequential_batches(all, batch_size));
    return;
  }
  const data::EncodedSet some =
      take_rows(all, random_subset(all.num_sequences, set.used, subset_seed(cfg, set.name)));
  auto sampler = encoder_sampler(cfg, rd, some, batch_size, data::SampleOrder::kSequential, seed);
  set.batches = take_batches(*sampler, data::sequential_batches(some, batch_size));
}

}  // namespace

RunData load_run_data(const config::Config& cfg, data::Shard shard) {
  RunData rd;
  if (cfg.model.type != config::ModelType::kDistilbert) {  // the decoders: gpt, llama
    load_lm_data(cfg, rd, shard);
  } else {
    load_encoder_data(cfg, rd, shard);
  }
  return rd;
}

namespace {

// Rows [r*B, (r+1)*B) of every batch of a set drawn with W x B rows (the shard's slice).
void keep_rows(EvalSet& set, data::Shard shard, int64_t B) {
  if (shard.world_size == 1) return;
  const auto slice = [&](torch::Tensor& t) {
    if (t.defined()) t = t.narrow(0, shard.rank * B, B).clone();
  };
  for (Batch& b : set.batches) {
    slice(b.x);
    slice(b.y);
    slice(b.mask);
    slice(b.pos);
  }
}

}  // namespace

EvalSet make_train_eval_set(const config::Config& cfg, const RunData& rd, const std::string& split,
                            data::Shard shard) {
  EvalSet set;
  set.name = split;
  set.source = rd.source;
  // The set is drawn at the global batch (W x B rows), whatever the rank, and each rank keeps
  // its slice: the ranks' sums add up to one rank's over the same rows.
  const int64_t B = cfg.train.batch_size * shard.world_size, T = cfg.model.block_size;
  const uint64_t seed = static_cast<uint64_t>(cfg.train.seed) + (split == "train" ? 1 : 2);
  if (cfg.model.type != config::ModelType::kDistilbert) {  // the decoders: gpt, llama
    // The stream sampled with one rng across batches, as nanoGPT's estimate_loss.
    const std::vector<int32_t>& tokens = split == "train" ? rd.splits.train : rd.splits.val;
    std::mt19937_64 rng(seed);
    for (int64_t i = 0; i < cfg.train.eval_steps; ++i) {
      Batch b;
      b.x = torch::empty({B, T}, torch::kLong);
      b.y = torch::empty({B, T}, torch::kLong);
      data::sample_batch(tokens, B, T, rng, b.x.data_ptr<int64_t>(), b.y.data_ptr<int64_t>());
      set.batches.push_back(b);
    }
  } else {
    const data::EncodedSet& s = split == "train" ? rd.train_set : rd.val_set;
    auto sampler = encoder_sampler(cfg, rd, s, B, data::SampleOrder::kRandom, seed);
    set.batches = take_batches(*sampler, cfg.train.eval_steps);
  }
  keep_rows(set, shard, cfg.train.batch_size);
  return set;
}

EvalSet make_validation_eval_set(const config::Config& cfg, const RunData& rd, int64_t batch_size,
                                 int64_t max_batches) {
  EvalSet set;
  set.name = "val";
  set.source = cfg.data.val_path.empty()
                   ? fmt::format("{} (tail {})", rd.source, cfg.data.val_fraction)
                   : cfg.data.val_path;
  if (cfg.model.type != config::ModelType::kDistilbert) {  // the decoders: gpt, llama
    fill_window_set(set, cfg, rd.splits.val, batch_size, max_batches);
    return set;
  }
  fill_encoder_set(set, cfg, rd, rd.val_set, batch_size, max_batches);
  return set;
}

EvalSet make_file_eval_set(const config::Config& cfg, const RunData& rd, const std::string& name,
                           const std::string& path, int64_t batch_size, int64_t max_batches) {
  EvalSet set;
  set.name = name;
  set.source = path;
  if (cfg.model.type != config::ModelType::kDistilbert) {  // the decoders: gpt, llama
    const std::string text = data::read_file_maybe_gzip(path);
    const std::vector<int32_t> tokens = rd.tokenizer->encode(text);
    if (static_cast<int64_t>(tokens.size()) < cfg.model.block_size + 1) {
      throw DataError(fmt::format("{}: {} tokens hold no window of model.block_size {} + 1", path,
                                  tokens.size(), cfg.model.block_size));
    }
    fill_window_set(set, cfg, tokens, batch_size, max_batches);
    return set;
  }
  const data::TextDataset ds =
      data::read_text_dataset(path, read_options(cfg, 0, static_cast<uint64_t>(cfg.train.seed)));
  warn_bad_rows(ds);
  const data::EncodedSet enc = encode(cfg, rd, ds);
  fill_encoder_set(set, cfg, rd, enc, batch_size, max_batches);
  return set;
}

std::vector<std::pair<std::string, std::string>> eval_paths(const config::Config& cfg) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : config::split_list(cfg.eval.paths)) {
    const size_t eq = item.find('=');
    if (eq != std::string::npos) {
      out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
      continue;
    }
    const std::filesystem::path p(item);
    const std::string parent = p.parent_path().filename().string();
    out.emplace_back(parent.empty() ? p.filename().string() : parent + "/" + p.filename().string(),
                     item);
  }
  return out;
}

}  // namespace llmprof::train
