// The data of a run, whatever the task: the tokenizer, the training batch sampler and fixed eval
// batches. lm reads one text (or the generated corpus) as a token stream (nanoGPT); mlm and
// classify read dataset files (data/text_dataset.h) into fixed-length encoder sequences
// (data/encoder_data.h), with a validation file or the tail of the training records.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llmprof/data/dataset.h"
#include "llmprof/data/encoder_data.h"
#include "llmprof/data/loader.h"
#include "llmprof/data/tokenizer.h"
#include "llmprof/rundir/summary_context.h"
#include "llmprof/train/task.h"

namespace llmprof::config {
struct Config;
}

namespace llmprof::train {

// Batches fixed before training, so every evaluation sees the same data.
struct EvalSet {
  std::string name;    // train | val | a name from eval.paths
  std::string source;  // file path or description
  std::vector<Batch> batches;
  int64_t available = 0;  // sequences (windows for lm) in the whole set
  int64_t used = 0;       // sequences evaluated
  std::string sampling;   // how a limited set was drawn; empty = the whole set, in order
};

struct RunData {
  std::unique_ptr<data::Tokenizer> tokenizer;
  data::SpecialTokens special;                  // wordpiece only
  std::unique_ptr<data::BatchSampler> train_sampler;
  std::string source;       // corpus path, or "generated(seed=…, chars=…)"
  int64_t corpus_bytes = 0;
  std::string description;  // one log line: sizes of the splits
  int64_t mlm_predictions = 0;  // P (mlm)
  rundir::DataFigures figures;  // summary.json's data: files, records, bad rows, tokens
  // Storage the samplers read (kept alive with them).
  data::TokenSplits splits;
  data::EncodedSet train_set, val_set;
};

// Reads and tokenizes the run's data. Throws DataError/ConfigError naming the file or key. The
// training sampler draws this rank's slice of the global sample stream (data/loader.h Shard).
RunData load_run_data(const config::Config& cfg, data::Shard shard = {});

// Train-time eval batches (train.eval_steps per split): lm samples random windows with seeds
// train.seed + 1 / + 2 (as before); the encoder tasks draw random batches the same way. Drawn at
// the global batch (world_size x train.batch_size rows) and cut to this rank's rows, so the
// ranks' eval sums add up to those of one rank with the global batch.
EvalSet make_train_eval_set(const config::Config& cfg, const RunData& rd, const std::string& split,
                            data::Shard shard = {});

// A whole eval set for llmprof eval/bench: the validation split, or a file from eval.paths read
// with the run's tokenizer, in order, in batches of batch_size. With max_batches > 0 and a larger
// set, a seeded random subset of max_batches x batch_size sequences (windows for lm), kept in
// file order: files are often sorted (IMDB by label), so their head is no sample.
EvalSet make_validation_eval_set(const config::Config& cfg, const RunData& rd, int64_t batch_size,
                                 int64_t max_batches);
EvalSet make_file_eval_set(const config::Config& cfg, const RunData& rd, const std::string& name,
                           const std::string& path, int64_t batch_size, int64_t max_batches);

// eval.paths parsed: (name, path) pairs; a path without "name=" is named by its last two
// path components ("gsm8k/test.jsonl").
std::vector<std::pair<std::string, std::string>> eval_paths(const config::Config& cfg);

}  // namespace llmprof::train
