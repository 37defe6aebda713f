// What llmprof eval and bench share: the runtime (threads, BLAS), the run's data and tokenizer,
// the task's model in eval mode with its checkpoint loaded, and the eval sets.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/device/context.h"
#include "llmprof/rundir/eval_doc.h"
#include "llmprof/train/run_data.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/task.h"

namespace llmprof::eval {

struct Prepared {
  config::Config cfg;          // the given config with the checkpoint's model shape
  std::vector<std::string> notes;  // what was taken from the checkpoint (logged)
  train::RuntimeInfo runtime;
  std::unique_ptr<device::DeviceContext> device;  // cfg.device: the model and eval sets live there
  train::RunData data;
  std::unique_ptr<train::Task> task;
  std::optional<checkpoint::LoadReport> checkpoint;  // none: init weights (warned)
};

// Tensors the checkpoint lacks, left at their initial (random) values; empty without a
// checkpoint, where every tensor is (weights_label says "initial").
std::vector<std::string> init_tensors(const Prepared& p);

// The weights behind a result: "checkpoint", "partly initial (N tensors at init)" or "initial".
std::string weights_label(const Prepared& p);

// checkpoint: a checkpoint/run directory, or empty for model.init_from (or none). A checkpoint
// that lacks tensors of this model (a task head) is a ConfigError unless allow_init_weights:
// metrics through freshly initialised weights are not results.
Prepared prepare(const config::Config& cfg, const std::string& checkpoint, bool allow_init_weights);

// The validation split and every eval.paths file, batch_size each, eval.max_batches at most
// (a seeded random subset of the sequences when the set is larger).
std::vector<train::EvalSet> eval_sets(const Prepared& p, int64_t batch_size);

// Evaluates set (on device's device) with the model in eval mode, no grad, under autocast.
// Returns the sums and the wall time in seconds, to the end of the device's work.
train::EvalSums evaluate_set(train::Task& task,
                             const train::EvalSet& set,
                             const device::Autocast& autocast,
                             device::DeviceContext& device,
                             double* seconds);

// What mapped the text to ids (eval.json and bench.json "tokenizer"): type, vocab_size and the
// content hash, the run's own tokenizer when the checkpoint keeps one.
rundir::DocTokenizer doc_tokenizer(const data::Tokenizer& t);

}  // namespace llmprof::eval
