#include "prepare.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "llmprof/base/clock.h"
#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/model/autocast.h"

namespace llmprof::eval {

std::vector<std::string> init_tensors(const Prepared& p) {
  return p.checkpoint ? p.checkpoint->missing : std::vector<std::string>{};
}

std::string weights_label(const Prepared& p) {
  if (!p.checkpoint) return "initial";
  if (p.checkpoint->missing.empty()) return "checkpoint";
  return fmt::format("partly initial ({} tensors at init)", p.checkpoint->missing.size());
}

Prepared prepare(const config::Config& cfg_in, const std::string& checkpoint,
                 bool allow_init_weights) {
  Prepared p;
  p.cfg = cfg_in;
  const config::Config& cfg = p.cfg;
  const std::string path = checkpoint.empty() ? cfg.model.init_from : checkpoint;
  const std::string key = checkpoint.empty() ? "model.init_from" : "--checkpoint";
  // An llmprof run brings its tokenizer (a Hugging Face folder's is adopted with its model).
  checkpoint::RunTokenizer run_tokenizer;
  if (!path.empty()) {
    p.notes = checkpoint::adopt_checkpoint_model(p.cfg, path, key);
    if (!checkpoint::is_hf_folder(path)) {
      run_tokenizer = checkpoint::take_checkpoint_tokenizer(p.cfg, path, key);
      if (!run_tokenizer.note.empty()) spdlog::warn("{}", run_tokenizer.note);
    }
  }
  config::validate(cfg);
  p.device = device::DeviceContext::make(cfg);  // cpu, or a cuda device this host has
  p.runtime = train::apply_runtime(cfg);
  p.data = train::load_run_data(cfg);
  if (!path.empty()) checkpoint::check_run_tokenizer(run_tokenizer, *p.data.tokenizer, path);
  p.task = train::make_task(cfg, p.data.tokenizer->vocab_size(), p.data.mlm_predictions);
  if (!path.empty()) {
    p.checkpoint = checkpoint::load_checkpoint(path, p.task->module(), cfg, key);
    const std::vector<std::string>& missing = p.checkpoint->missing;
    if (!missing.empty() && !allow_init_weights) {
      throw ConfigError(
          fmt::format("{}: checkpoint {} ({} task) lacks {} tensors of this {} model ({}); their "
                      "random initial values would make every figure meaningless. Evaluate a "
                      "checkpoint trained for train.task={}, or pass --allow-init-weights to "
                      "measure anyway (results are then marked)",
                      key, p.checkpoint->path, p.checkpoint->task, missing.size(),
                      p.task->name(), fmt::join(missing, ", "), p.task->name()),
          cfg.source_file, key);
    }
    if (!missing.empty()) {
      spdlog::warn("checkpoint {} lacks {} tensors of this model, left at init: {}; every result "
                   "is marked 'partly initial'",
                   p.checkpoint->path, missing.size(), fmt::join(missing, ", "));
    }
  } else {
    spdlog::warn("no --checkpoint and no model.init_from: measuring the untrained (initial) model");
  }
  device::move_module(p.task->module(), *p.device);
  p.task->module().eval();
  return p;
}

std::vector<train::EvalSet> eval_sets(const Prepared& p, int64_t batch_size) {
  const config::Config& cfg = p.cfg;
  std::vector<train::EvalSet> sets;
  sets.push_back(train::make_validation_eval_set(cfg, p.data, batch_size, cfg.eval.max_batches));
  for (const auto& [name, path] : train::eval_paths(cfg)) {
    sets.push_back(
        train::make_file_eval_set(cfg, p.data, name, path, batch_size, cfg.eval.max_batches));
  }
  for (train::EvalSet& set : sets) {
    if (!set.sampling.empty()) spdlog::info("eval set {}: {}", set.name, set.sampling);
    for (train::Batch& b : set.batches) b = train::copy_to_device(*p.device, b);
  }
  return sets;
}

train::EvalSums evaluate_set(train::Task& task,
                             const train::EvalSet& set,
                             const device::Autocast& autocast,
                             device::DeviceContext& device,
                             double* seconds) {
  torch::NoGradGuard no_grad;
  task.module().eval();
  train::EvalSums sums;
  const int64_t t0 = now_ns();
  for (const train::Batch& b : set.batches) {
    model::AutocastScope scope(autocast.device_type, autocast.dtype, autocast.on);
    task.eval_batch(b, sums);
  }
  device.synchronize();  // sync: the time runs to the end of the device's work
  if (seconds) *seconds = static_cast<double>(now_ns() - t0) * 1e-9;
  return sums;
}

// What mapped the text to ids: the run's own tokenizer when the checkpoint keeps one.
rundir::DocTokenizer doc_tokenizer(const data::Tokenizer& t) {
  const std::string sha = t.fingerprint();
  return {std::string(t.name()), t.vocab_size(),
          sha.empty() ? std::nullopt : std::optional<std::string>(sha)};
}


}  // namespace llmprof::eval
