#include "eval/prepare.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/model/autocast.h"
#include "llmprof/profile/phase.h"
#include "train/setup.h"

namespace llmprof::eval {

Prepared prepare(const config::Config& cfg, const std::string& checkpoint) {
  config::validate(cfg);
  train::check_device(cfg);
  Prepared p;
  p.runtime = train::apply_runtime(cfg);
  p.data = train::load_run_data(cfg);
  p.task = train::make_task(cfg, p.data.tokenizer->vocab_size(), p.data.mlm_predictions);
  const std::string path = checkpoint.empty() ? cfg.model.init_from : checkpoint;
  const std::string key = checkpoint.empty() ? "model.init_from" : "--checkpoint";
  if (!path.empty()) {
    p.checkpoint = train::load_checkpoint(path, p.task->module(), cfg, key);
    if (!p.checkpoint->missing.empty()) {
      spdlog::warn("checkpoint {} lacks {} tensors of this model, left at init: {}",
                   p.checkpoint->path, p.checkpoint->missing.size(),
                   fmt::format("{}", fmt::join(p.checkpoint->missing, ", ")));
    }
  } else {
    spdlog::warn("no --checkpoint and no model.init_from: measuring the untrained (initial) model");
  }
  p.task->module().eval();
  return p;
}

std::vector<train::EvalSet> eval_sets(const config::Config& cfg, const Prepared& p,
                                      int64_t batch_size) {
  std::vector<train::EvalSet> sets;
  sets.push_back(train::make_validation_eval_set(cfg, p.data, batch_size, cfg.eval.max_batches));
  for (const auto& [name, path] : train::eval_paths(cfg)) {
    sets.push_back(
        train::make_file_eval_set(cfg, p.data, name, path, batch_size, cfg.eval.max_batches));
  }
  return sets;
}

train::EvalSums evaluate_set(train::Task& task, const train::EvalSet& set, bool bf16,
                             double* seconds) {
  torch::NoGradGuard no_grad;
  task.module().eval();
  train::EvalSums sums;
  const int64_t t0 = profile::now_ns();
  for (const train::Batch& b : set.batches) {
    model::CpuAutocastScope autocast(bf16);
    task.eval_batch(b, sums);
  }
  if (seconds) *seconds = static_cast<double>(profile::now_ns() - t0) * 1e-9;
  return sums;
}

}  // namespace llmprof::eval
