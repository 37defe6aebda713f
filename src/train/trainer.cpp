#include "llmprof/train/trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <optional>

#include "llmprof/base/clock.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/loader.h"
#include "llmprof/error.h"
#include "llmprof/model/autocast.h"
#include "llmprof/model/flops.h"
#include "llmprof/profile/phase.h"
#include "llmprof/train/run_data.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/session.h"
#include "llmprof/train/setup.h"
#include "llmprof/train/task.h"
#include "llmprof/train/weights.h"

namespace llmprof::train {

namespace {

// ---------------------------------------------------------------------------------------------
// SIGINT/SIGTERM: finish the current step, then stop with status "interrupted".

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C kills as usual
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  int signal() const { return g_stop_signal; }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// ---------------------------------------------------------------------------------------------
// Eval: fixed batches (built once, before training) so eval losses are comparable over time.

EvalSums evaluate(Task& task, const EvalSet& set, bool bf16) {
  torch::NoGradGuard no_grad;
  task.module().eval();
  EvalSums sums;
  for (const Batch& b : set.batches) {
    model::CpuAutocastScope autocast(bf16);
    task.eval_batch(b, sums);
  }
  task.module().train();
  return sums;
}

std::optional<double> accuracy_of(const Task& task, const EvalSums& sums) {
  if (!task.reports_accuracy()) return std::nullopt;
  return sums.accuracy();
}

}  // namespace

namespace {

// What the Session cannot know: this run's model and the work of one step.
SessionOptions session_options(const config::Config& cfg, Task& task, const TrainOptions& opts) {
  const int64_t B = cfg.train.batch_size, T = cfg.model.block_size, A = cfg.train.grad_accum_steps;
  SessionOptions o;
  o.output_dir = opts.output_dir;
  o.run_label = opts.run_label;
  o.quiet = opts.quiet;
  o.command_line = opts.command_line;
  o.model_description = task.describe();
  o.task = task.kind();
  o.parameters = task.num_parameters();
  o.tokens_per_step = B * T * A;
  o.samples_per_step = B * A;
  o.flops_per_step = task.train_flops_per_step(B, A, cfg.train.activation_checkpointing);
  o.flops_formula = task.flops_formula(cfg.train.activation_checkpointing);
  const profile::ScopeFlops scope_flops = task.scope_forward_flops(B);
  for (int id = 0; id < profile::kNumScopes; ++id) {
    const auto scope = static_cast<profile::Scope>(id);
    if (scope_flops[static_cast<size_t>(id)] < 0) continue;  // not modelled
    o.scope_forward_flops.emplace_back(profile::scope_name(scope),
                                       scope_flops[static_cast<size_t>(id)]);
  }
  o.max_steps = cfg.schedule.max_steps;
  return o;
}

}  // namespace

TrainResult run_training(const config::Config& cfg, const TrainOptions& opts) {
  config::validate(cfg);
  check_device(cfg);
  const bool bf16 = cfg.train.precision == config::Precision::kBf16;

  // -- set-up (before anything touches the run directory, so bad input leaves no debris) ------
  RuntimeInfo runtime = apply_runtime(cfg);
  RunData rd = load_run_data(cfg);
  std::unique_ptr<Task> task = make_task(cfg, rd.tokenizer->vocab_size(), rd.mlm_predictions);
  std::optional<LoadReport> init;
  if (!cfg.model.init_from.empty()) {
    init = load_checkpoint(cfg.model.init_from, task->module(), cfg, "model.init_from");
  }
  auto optimizer = build_optimizer(cfg, task->module());
  const std::vector<torch::Tensor> params = task->module().parameters();
  const int64_t A = cfg.train.grad_accum_steps, max_steps = cfg.schedule.max_steps;
  const EvalSet eval_train = make_train_eval_set(cfg, rd, "train");
  const EvalSet eval_val = make_train_eval_set(cfg, rd, "val");

  // -- the session: run directory, phase timers, modules/ops profiler, energy -----------------
  Session session(cfg, session_options(cfg, *task, opts), &runtime);
  const std::string& dir = session.run_dir();
  rd.tokenizer->save(dir);
  spdlog::info("data: {} ({} bytes), {} tokenizer, vocab {}, {}", rd.source, rd.corpus_bytes,
               rd.tokenizer->name(), rd.tokenizer->vocab_size(), rd.description);
  if (init) {
    spdlog::info("init_from {} ({} task, step {}): {} tensors loaded, {} kept at init{}{}",
                 init->path, init->task, init->step, init->loaded, init->missing.size(),
                 init->missing.empty() ? "" : fmt::format(" ({})", fmt::join(init->missing, ", ")),
                 init->unexpected.empty()
                     ? ""
                     : fmt::format(", {} unused ({})", init->unexpected.size(),
                                   fmt::join(init->unexpected, ", ")));
  }
  data::BatchLoader loader(*rd.train_sampler, cfg.data.num_workers, cfg.data.prefetch);

  // -- preallocated loop state -----------------------------------------------------------------
  std::vector<torch::Tensor> micro_loss(static_cast<size_t>(A));
  torch::Tensor grad_norm;
  data::BatchView held;  // the last micro-batch, handed back at the next data phase
  bool holding = false;
  StopSignals signals;
  RunStatus status = RunStatus::kCompleted;
  std::string message;

  try {
    for (int64_t n = 1; n <= max_steps; ++n) {  // step numbers count from 1 everywhere
      const double lr = learning_rate(cfg, n - 1);
      set_learning_rate(*optimizer, lr);
      Step step = session.step();

      // ---- timed step: no allocation, I/O, formatting or host sync beyond training's own ----
      for (int64_t micro = 0; micro < A; ++micro) {
        data::BatchView batch;
        Batch b;
        torch::Tensor loss;
        {
          // The previous batch's slot goes back here, so refilling it is data time and the data
          // phase runs once per micro-batch, where the batch is taken.
          auto phase = step.phase(profile::Phase::kData);
          if (holding) loader.release(held);
          batch = loader.next();
          b = wrap_batch(batch);
        }
        {
          auto phase = step.phase(profile::Phase::kForward);
          model::CpuAutocastScope autocast(bf16);
          loss = task->loss(b);
          if (A > 1) loss = loss / static_cast<double>(A);
        }
        {
          auto phase = step.phase(profile::Phase::kBackward);
          loss.backward();
        }
        micro_loss[static_cast<size_t>(micro)] = loss.detach();
        held = batch;  // backward is done with it (embedding, mask, loss); released next phase
        holding = true;
      }
      {
        auto phase = step.phase(profile::Phase::kOptimizer);
        if (cfg.optim.grad_clip > 0) grad_norm = clip_grad_norm(params, cfg.optim.grad_clip);
        optimizer->step();
        zero_grad_to_none(params);
      }
      step.end();
      // ---- end of timed step ----

      double step_loss = 0;
      for (const auto& l : micro_loss) step_loss += l.item<double>();  // sync: loss read once, after timing
      step.set_loss(step_loss);
      step.set_lr(lr);
      if (cfg.optim.grad_clip > 0) step.set_grad_norm(grad_norm.item<double>());
      if (!std::isfinite(step_loss)) {
        status = RunStatus::kDiverged;
        message = fmt::format("loss became {} at step {} (lr {:.3g}): lower optim.lr, raise "
                              "schedule.warmup_steps or set optim.grad_clip",
                              std::isnan(step_loss) ? "nan" : (step_loss > 0 ? "inf" : "-inf"), n,
                              lr);
        break;  // the step's row is written as it leaves scope
      }

      const bool last = n == max_steps;
      if (cfg.train.eval_interval > 0 && (n % cfg.train.eval_interval == 0 || last)) {
        const int64_t t0 = now_ns();
        const EvalSums tr = evaluate(*task, eval_train, bf16), va = evaluate(*task, eval_val, bf16);
        step.record_eval({{"train", tr.mean_loss(), accuracy_of(*task, tr)},
                          {"val", va.mean_loss(), accuracy_of(*task, va)}},
                         static_cast<double>(now_ns() - t0) * 1e-6);
      }
      if (cfg.train.save_checkpoint && cfg.train.checkpoint_interval > 0 && !last &&
          n % cfg.train.checkpoint_interval == 0) {
        save_checkpoint(fmt::format("{}/checkpoint-step{}", dir, n), task->module(), cfg,
                        task->kind(), n);
      }
      if (signals.signal() != 0 && !last) {
        status = RunStatus::kInterrupted;
        message = fmt::format("stopped by signal {} after step {}", signals.signal(), n);
        break;
      }
    }
  } catch (const llmprof::Error&) {
    throw;
  } catch (const std::exception& e) {
    status = RunStatus::kFailed;
    message = e.what();
    // Keep only the first line of LibTorch's multi-line messages for the summary and the log.
    message = message.substr(0, message.find('\n'));
  }

  // -- the end: checkpoint, summary ------------------------------------------------------------
  const int64_t done = session.steps_completed();
  if (cfg.train.save_checkpoint && done > 0 && status != RunStatus::kDiverged) {
    save_checkpoint(dir + "/checkpoint", task->module(), cfg, task->kind(), done);
    spdlog::info("checkpoint {}/checkpoint (step {})", dir, done);
  }
  session.annotate("data", rd.report.dump());
  if (init) {
    session.annotate("init_from", nlohmann::json{{"path", init->path},
                                                 {"task", init->task},
                                                 {"step", init->step},
                                                 {"loaded", init->loaded},
                                                 {"missing", init->missing},
                                                 {"unexpected", init->unexpected}}
                                      .dump());
  }
  const RunSummary s = session.finish(status, message);

  TrainResult result;
  result.run_dir = s.run_dir;
  result.status = run_status_name(s.status);
  result.message = s.message;
  result.steps_completed = s.steps_completed;
  result.final_train_loss = s.final_train_loss.value_or(NAN);
  result.final_val_loss = s.final_val_loss;
  result.median_step_ms = s.median_step_ms;
  result.tokens_per_s = s.tokens_per_s;
  result.mfu = s.mfu;
  result.top_ops = s.top_ops;
  return result;
}

}  // namespace llmprof::train
