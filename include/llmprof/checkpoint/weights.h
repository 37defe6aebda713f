// Model checkpoints: a directory with model.pt (every named parameter and buffer, LibTorch's
// serialize archive), checkpoint.json (schema_version, model type, task, step, shapes, the
// parameter names) and config.yaml (the run's resolved config). model.init_from loads one into a
// freshly built model: matching names are copied, the head a fine-tuning run adds stays at its
// init, and every mismatch is named.
#pragma once


#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/rundir/summary_context.h"

// Only references to a module pass through here: the declaration keeps <torch/torch.h> (about
// 15 s of compile per file without the precompiled header) out of the CLI's files that include us.
namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace llmprof::config {
struct Config;
}
namespace llmprof::data {
class Tokenizer;
}

namespace llmprof::checkpoint {

// Writes dir (created; replaced atomically via dir.tmp) for the model after `step` steps, with
// the run's tokenizer (its files in dir/tokenizer and their content hash in checkpoint.json) and
// the Hugging Face config.json the run started from, if any (dir/hf_config.json): the checkpoint
// needs nothing outside itself. tokenizer may be null (recorded by type and path only).
// more_files, when given, writes further files into the temporary folder before it is renamed
// (train.resume_from's optimizer and random states), so they appear with the weights or not at all.
void save_checkpoint(const std::string& dir, torch::nn::Module& model, const config::Config& cfg,
                     config::TaskKind task, int64_t step,
                     const data::Tokenizer* tokenizer = nullptr,
                     const std::function<void(const std::string& tmp_dir)>& more_files = {});

// What load_checkpoint read: summary.json's init_from section (rundir/summary_context.h).
using LoadReport = rundir::InitFromFigures;

// Resolves a checkpoint directory: `path` itself when it holds model.pt, else path/checkpoint
// (a run directory). Throws ConfigError naming `key` when neither exists.
std::string resolve_checkpoint_dir(const std::string& path, const config::Config& cfg,
                                   const std::string& key);

// The model shape of the checkpoint at path (a checkpoint or run directory), from its config.yaml:
// every model.* key that fixes a tensor's shape is set in cfg from the checkpoint, so a config
// file gives data and eval settings and the checkpoint the model. A shape key given with --set
// (cfg.set_keys) that differs is a ConfigError naming both values. Returns one note per key the
// config file gave that differs (a default the checkpoint replaces is no disagreement).
std::vector<std::string> adopt_checkpoint_model(config::Config& cfg, const std::string& path,
                                                const std::string& key);

// What take_checkpoint_tokenizer found: the sha256 the tokenizer built from cfg.data must have,
// or, for a checkpoint that records none (saved by an earlier llmprof), an empty one and a note.
struct RunTokenizer {
  std::string sha256;
  std::string note;
};

// Points cfg.data (tokenizer, vocab_path, merges_path, lower_case) at the copy of the tokenizer
// the checkpoint at path (a checkpoint or run directory) was trained with: eval, bench and
// export tokenize as the run did. A tokenizer the config names (a data.* tokenizer key given in
// the file or with --set, or model.init_from's Hugging Face folder) that differs from it by
// content hash is a ConfigError naming both; one of another kind too.
RunTokenizer take_checkpoint_tokenizer(config::Config& cfg, const std::string& path,
                                       const std::string& key);

// Throws DataError unless tokenizer's fingerprint is rt.sha256: the copy in the checkpoint was
// changed after the run. Nothing to check when rt.sha256 is empty.
void check_run_tokenizer(const RunTokenizer& rt, const data::Tokenizer& tokenizer,
                         const std::string& checkpoint);

// Loads the checkpoint at path into model. Throws ConfigError (naming `key`, e.g. model.init_from)
// for a missing/unreadable checkpoint, another model type, or a tensor whose shape differs.
LoadReport load_checkpoint(const std::string& path, torch::nn::Module& model,
                           const config::Config& cfg, const std::string& key);

}  // namespace llmprof::checkpoint
