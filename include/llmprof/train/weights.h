// Model checkpoints: a directory with model.pt (every named parameter and buffer, LibTorch's
// serialize archive), checkpoint.json (schema_version, model type, task, step, shapes, the
// parameter names) and config.yaml (the run's resolved config). model.init_from loads one into a
// freshly built model: matching names are copied, the head a fine-tuning run adds stays at its
// init, and every mismatch is named.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"

namespace llmprof::config {
struct Config;
}

namespace llmprof::train {

// Writes dir (created; replaced atomically via dir.tmp) for the model after `step` steps.
void save_checkpoint(const std::string& dir, torch::nn::Module& model, const config::Config& cfg,
                     config::TaskKind task, int64_t step);

struct LoadReport {
  std::string path;                       // the checkpoint directory actually read
  std::string task;                       // the task it was trained on, as checkpoint.json says
  int64_t step = 0;
  int64_t loaded = 0;                     // tensors copied
  std::vector<std::string> missing;       // in the model, not in the checkpoint (kept at init)
  std::vector<std::string> unexpected;    // in the checkpoint, not in the model (ignored)
};

// Resolves a checkpoint directory: `path` itself when it holds model.pt, else path/checkpoint
// (a run directory). Throws ConfigError naming `key` when neither exists.
std::string resolve_checkpoint_dir(const std::string& path, const config::Config& cfg,
                                   const std::string& key);

// The model shape of the checkpoint at path (a checkpoint or run directory), from its config.yaml:
// every model.* key that fixes a tensor's shape is set in cfg from the checkpoint, so a config
// file gives data and eval settings and the checkpoint the model. A shape key given with --set
// (cfg.set_keys) that differs is a ConfigError naming both values. Returns one note per key
// changed.
std::vector<std::string> adopt_checkpoint_model(config::Config& cfg, const std::string& path,
                                                const std::string& key);

// Loads the checkpoint at path into model. Throws ConfigError (naming `key`, e.g. model.init_from)
// for a missing/unreadable checkpoint, another model type, or a tensor whose shape differs.
LoadReport load_checkpoint(const std::string& path, torch::nn::Module& model,
                           const config::Config& cfg, const std::string& key);

}  // namespace llmprof::train
