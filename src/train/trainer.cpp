#include "llmprof/train/trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <optional>
#include <thread>

#include "cuda_graph.h"
#include "fused_adam.h"
#include "llmprof/base/clock.h"
#include "llmprof/checkpoint/hf_checkpoint.h"
#include "llmprof/checkpoint/resume.h"
#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/loader.h"
#include "llmprof/device/context.h"
#include "llmprof/device/device.h"
#include "llmprof/dist/data_parallel.h"
#include "llmprof/dist/rank_env.h"
#include "llmprof/error.h"
#include "llmprof/model/autocast.h"
#include "llmprof/model/flops.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/plan/plan.h"
#include "llmprof/plan/probe.h"
#include "llmprof/profile/phase.h"
#include "llmprof/profile/tracer.h"
#include "llmprof/rundir/files.h"
#include "llmprof/train/run_data.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/session.h"
#include "llmprof/train/setup.h"
#include "llmprof/train/task.h"
#include "loss_scaler.h"

namespace llmprof::train {

using checkpoint::adopt_hf_model;
using checkpoint::apply_rng_state;
using checkpoint::check_resume;
using checkpoint::check_run_tokenizer;
using checkpoint::is_hf_folder;
using checkpoint::load_checkpoint;
using checkpoint::load_optimizer_state;
using checkpoint::LoadReport;
using checkpoint::read_rng_state;
using checkpoint::ResumePoint;
using checkpoint::rng_state_archive;
using checkpoint::RngState;
using checkpoint::RunTokenizer;
using checkpoint::save_checkpoint;
using checkpoint::save_optimizer_state;
using checkpoint::take_checkpoint_tokenizer;
using device::Autocast;
using device::DeviceContext;

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
  struct sigaction old_int_ {
  }, old_term_{};
};

// ---------------------------------------------------------------------------------------------
// Eval: fixed batches (built once, before training) so eval losses are comparable over time.

EvalSums evaluate(Task& task, const EvalSet& set, const Autocast& precision) {
  torch::NoGradGuard no_grad;
  task.module().eval();
  EvalSums sums;
  for (const Batch& b : set.batches) {
    model::AutocastScope autocast(precision.device_type, precision.dtype, precision.on);
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

namespace {

// Everything the loop trains with, built from a validated config before the run directory
// exists, so bad input fails here and leaves no debris. Built in place and never moved: the
// samplers refer to the token vectors inside `data`.
struct Training {
  // shard: this rank's slice of the sample stream (world size 1: the whole of it). resume_from:
  // train.resume_from's checkpoint, checked (check_resume), or none.
  Training(const config::Config& cfg, data::Shard shard, std::optional<ResumePoint> resume_from)
      : resume(std::move(resume_from)),
        precision(cfg),
        device(DeviceContext::make(cfg)),
        runtime(apply_runtime(cfg)),
        data(load_run_data(cfg, shard)),
        task(make_task(cfg, data.tokenizer->vocab_size(), data.mlm_predictions)) {
    // Dropout draws differ per rank (as in DDP); rank 0 keeps a single rank's stream. The
    // initial weights are rank 0's, broadcast before training.
    if (shard.rank > 0) torch::manual_seed(static_cast<uint64_t>(cfg.train.seed + shard.rank));
    if (!cfg.model.init_from.empty()) {
      init = load_checkpoint(cfg.model.init_from, task->module(), cfg, "model.init_from");
    }
    if (resume) load_resumed_weights(cfg);
    // Before the optimizer: its state follows the params.
    device::move_module(task->module(), *device);
    optimizer = build_optimizer(cfg, task->module());
    params = task->module().parameters();
    eval_train = on_device(make_train_eval_set(cfg, data, "train", shard));
    eval_val = on_device(make_train_eval_set(cfg, data, "val", shard));
    if (cfg.train.precision == config::Precision::kFp16) {
      scaler = std::make_unique<LossScaler>(device->device());
    }
    if (resume) {
      load_optimizer_state(*resume, cfg, *optimizer, scaler.get(), device->device());
      rng = read_rng_state(*resume, cfg, static_cast<int>(shard.rank), device->device());
    }
  }
  Training(const Training&) = delete;
  Training& operator=(const Training&) = delete;

  // The first step of this run: 1, or a resumed checkpoint's step + 1.
  int64_t first_step() const { return resume ? resume->step + 1 : 1; }

  // Every tensor of the model from the checkpoint (a resume leaves none at init).
  void load_resumed_weights(const config::Config& cfg) {
    const LoadReport r = load_checkpoint(resume->dir, task->module(), cfg, "train.resume_from");
    if (r.missing.empty() && r.unexpected.empty()) return;
    throw ConfigError(fmt::format("train.resume_from: checkpoint {} does not hold this model: {} "
                                  "missing ({}), {} not in the model ({})",
                                  r.path, r.missing.size(), fmt::join(r.missing, ", "),
                                  r.unexpected.size(), fmt::join(r.unexpected, ", ")),
                      cfg.source_file, "train.resume_from");
  }

  EvalSet on_device(EvalSet set) const {
    for (Batch& b : set.batches) b = copy_to_device(*device, b);
    return set;
  }

  std::optional<ResumePoint> resume;  // train.resume_from
  RngState rng;                       // its random state, applied before the first step
  Autocast precision;
  std::unique_ptr<DeviceContext> device;
  std::unique_ptr<LossScaler> scaler;  // fp16 only
  RuntimeInfo runtime;
  RunData data;
  std::unique_ptr<Task> task;
  std::optional<LoadReport> init;  // model.init_from
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<torch::Tensor> params;
  EvalSet eval_train, eval_val;
  // train.cuda_graphs: the captured step, its static input and outputs.
  std::unique_ptr<StepGraph> graph;
  Batch graph_batch;
  torch::Tensor graph_loss, graph_norm;
};

void log_inputs(const Training& t) {
  const RunData& rd = t.data;
  spdlog::info("data: {} ({} bytes), {} tokenizer, vocab {}, {}", rd.source, rd.corpus_bytes,
               rd.tokenizer->name(), rd.tokenizer->vocab_size(), rd.description);
  if (!t.init) return;
  const LoadReport& i = *t.init;
  spdlog::info("init_from {} ({} task, step {}): {} tensors loaded, {} kept at init{}{}", i.path,
               i.task, i.step, i.loaded, i.missing.size(),
               i.missing.empty() ? "" : fmt::format(" ({})", fmt::join(i.missing, ", ")),
               i.unexpected.empty() ? ""
                                    : fmt::format(", {} unused ({})", i.unexpected.size(),
                                                  fmt::join(i.unexpected, ", ")));
}

// Loop state, allocated once.
struct LoopState {
  explicit LoopState(int64_t accum) : micro_loss(static_cast<size_t>(accum)) {}
  std::vector<torch::Tensor> micro_loss;
  torch::Tensor grad_norm;
  double loss_scale = 0;      // fp16: the scale this step's backward used
  bool step_skipped = false;  // fp16: a gradient was inf/NaN, the optimizer did not step
  data::BatchView held;       // the last micro-batch, handed back at the next data phase
  bool holding = false;
};

// The timed step: no allocation, I/O, formatting or host sync beyond training's own. Each micro-
// batch's backward goes through the step, whose participants take part (data-parallel: DDP's
// no_sync on every micro-step but the last, whose backward all-reduces the gradient buckets).
void timed_step(
    const config::Config& cfg, Training& t, Step& step, data::BatchLoader& loader, LoopState& s) {
  const int64_t A = cfg.train.grad_accum_steps;
  for (int64_t micro = 0; micro < A; ++micro) {
    data::BatchView batch;
    Batch b;
    torch::Tensor loss;
    {
      // The previous batch's slot goes back here, so refilling it is data time and the data
      // phase runs once per micro-batch, where the batch is taken.
      auto phase = step.phase(profile::Phase::kData);
      if (s.holding) loader.release(s.held);
      batch = loader.next();
      b = to_device(*t.device, wrap_batch(batch));  // CUDA: an async copy from a pinned slot
    }
    {
      auto phase = step.phase(profile::Phase::kForward);
      if (cfg.train.test_step_sleep_ms > 0) {  // test only: a known slowdown (0 unless set)
        std::this_thread::sleep_for(
            std::chrono::duration<double, std::milli>(cfg.train.test_step_sleep_ms));
      }
      const Autocast& p = t.precision;
      model::AutocastScope autocast(p.device_type, p.dtype, p.on);
      loss = t.task->loss(b);
      if (A > 1) loss = loss / static_cast<double>(A);
    }
    {
      auto phase = step.phase(profile::Phase::kBackward);
      if (t.scaler) s.loss_scale = t.scaler->current_scale();  // the host's copy: no device read
      step.backward(t.scaler ? t.scaler->scale(loss) : loss, /*sync=*/micro == A - 1);
    }
    s.micro_loss[static_cast<size_t>(micro)] = loss.detach();
    s.held = batch;  // backward is done with it (embedding, mask, loss); released next phase
    s.holding = true;
  }
  {
    auto phase = step.phase(profile::Phase::kOptimizer);
    s.step_skipped = false;
    if (t.scaler) {
      t.scaler->unscale(t.params);  // clipping and the optimizer see true gradients
      // sync: whether any gradient is inf/NaN (GradScaler.step reads it the same way).
      s.step_skipped = !t.scaler->gradients_finite();
    }
    if (cfg.optim.grad_clip > 0) s.grad_norm = clip_grad_norm(t.params, cfg.optim.grad_clip);
    if (!s.step_skipped) t.optimizer->step();
    if (t.scaler) t.scaler->update();
    zero_grad_to_none(t.params);
  }
  step.end();
}

// train.cuda_graphs, between steps (untimed): the step captured once, on a static copy of the
// last batch, after a warm-up forward and backward on the capture stream whose gradients are
// dropped (no update: the loss trajectory stays the eager one's).
void capture_step(const config::Config& cfg, Training& t, const LoopState& s) {
  auto* fused = dynamic_cast<FusedAdam*>(t.optimizer.get());
  if (fused == nullptr) throw Error("train.cuda_graphs: needs optim.fused=true");
  fused->use_device_learning_rates();
  fused->stage_learning_rates();
  t.graph_batch = copy_to_device(*t.device, wrap_batch(s.held));
  t.graph = StepGraph::make(static_cast<int>(cfg.device.index));
  const Autocast& p = t.precision;
  const auto forward_backward = [&] {
    torch::Tensor loss;
    {
      model::AutocastScope autocast(p.device_type, p.dtype, p.on);
      loss = t.task->loss(t.graph_batch);
    }
    loss.backward();
    return loss;
  };
  t.graph->capture(
      [&] {
        forward_backward();
        zero_grad_to_none(t.params);
      },
      [&] {
        t.graph_loss = forward_backward().detach();
        if (cfg.optim.grad_clip > 0) t.graph_norm = clip_grad_norm(t.params, cfg.optim.grad_clip);
        t.optimizer->step();
      });
}

// Copies a loader batch into the captured step's static input (async from the pinned slot).
void copy_into(Batch& dst, const Batch& src) {
  const auto copy = [](torch::Tensor& d, const torch::Tensor& from) {
    if (!d.defined()) return;
    if (d.sizes() != from.sizes()) {
      throw Error(
          fmt::format("train.cuda_graphs: a batch of shape [{}] does not fit the captured "
                      "step's [{}]",
                      fmt::join(from.sizes(), ", "), fmt::join(d.sizes(), ", ")));
    }
    d.copy_(from, /*non_blocking=*/true);
  };
  copy(dst.x, src.x);
  copy(dst.y, src.y);
  copy(dst.mask, src.mask);
  copy(dst.pos, src.pos);
}

// The timed step as a replay (train.cuda_graphs). The data phase copies the batch into the
// static input; the forward phase holds the whole replayed step (forward, backward, clip,
// optimizer), which a graph does not separate.
void graph_step(Training& t, Step& step, data::BatchLoader& loader, LoopState& s) {
  {
    auto phase = step.phase(profile::Phase::kData);
    if (s.holding) loader.release(s.held);
    s.held = loader.next();
    s.holding = true;
    copy_into(t.graph_batch, wrap_batch(s.held));
  }
  {
    auto phase = step.phase(profile::Phase::kForward);
    t.graph->replay();
  }
  s.micro_loss[0] = t.graph_loss;
  s.grad_norm = t.graph_norm;
  s.step_skipped = false;
  step.end();
}

struct Outcome {
  RunStatus status = RunStatus::kCompleted;
  std::string message;
};

// After the clock: the step's loss (read once, the step's one host sync), the divergence check.
std::optional<Outcome> record_loss(const config::Config& cfg,
                                   Step& step,
                                   const LoopState& s,
                                   double lr) {
  double loss = 0;
  for (const auto& l : s.micro_loss) loss += l.item<double>();
  step.set_loss(loss);
  step.set_lr(lr);
  if (s.loss_scale > 0) step.set_loss_scale(s.loss_scale, s.step_skipped);
  if (cfg.optim.grad_clip > 0) step.set_grad_norm(s.grad_norm.item<double>());
  if (std::isfinite(loss)) return std::nullopt;
  return Outcome{
      RunStatus::kDiverged,
      fmt::format("loss became {} at step {} (lr {:.3g}): lower optim.lr, raise "
                  "schedule.warmup_steps or set optim.grad_clip",
                  std::isnan(loss) ? "nan" : (loss > 0 ? "inf" : "-inf"), step.number(), lr)};
}

// Data-parallel: each rank evaluates its rows of the eval batches and the sums are added over
// ranks (Session::sum_over_processes), so the loss is that of the whole set whatever the world
// size.
void evaluate_step(Training& t, Session& session, Step& step) {
  const profile::ScopedEval in_eval;  // a recorded window's ops.csv keeps its ops apart
  const int64_t t0 = now_ns();
  EvalSums tr = evaluate(*t.task, t.eval_train, t.precision);
  EvalSums va = evaluate(*t.task, t.eval_val, t.precision);
  for (EvalSums* sums : {&tr, &va}) {
    std::vector<double> loss{sums->loss_sum};
    std::vector<int64_t> n{sums->targets, sums->correct, sums->batches, sums->rows, sums->tokens};
    session.sum_over_processes(loss, n, "eval all-reduce");
    sums->loss_sum = loss[0];
    std::tie(sums->targets, sums->correct, sums->batches, sums->rows, sums->tokens) =
        std::tie(n[0], n[1], n[2], n[3], n[4]);
  }
  step.record_eval({{"train", tr.mean_loss(), accuracy_of(*t.task, tr)},
                    {"val", va.mean_loss(), accuracy_of(*t.task, va)}},
                   static_cast<double>(now_ns() - t0) * 1e-6);
}

// An error ends the run: summary.json says "failed" and why, where it can still be written (a
// full disk may refuse it too; the error that stopped the run is what the caller sees).
void finish_failed(Session& session, const std::string& why) {
  if (session.finished()) return;
  try {
    session.finish(RunStatus::kFailed, why);
  } catch (...) {
  }
}

// A checkpoint that train.resume_from can continue: the weights, optimizer.pt and every rank's
// rng-rank<k>.pt, all in the one folder rank 0 writes and renames into place. Data-parallel: every
// rank calls it (its random state travels to rank 0 in an all-gather), so no rank writes into a
// folder another is replacing.
// Returns whether this process wrote it (data-parallel: rank 0).
bool save_run_checkpoint(const config::Config& cfg,
                         Training& t,
                         Session& session,
                         const std::string& dir,
                         int64_t step) {
  const std::vector<std::string> rng =
      session.checkpoint_state(rng_state_archive(t.device->device()));
  if (rng.empty()) return false;  // another rank writes it
  save_checkpoint(dir, t.task->module(), cfg, t.task->kind(), step, t.data.tokenizer.get(),
                  [&](const std::string& tmp_dir) {
                    save_optimizer_state(tmp_dir, *t.optimizer, t.scaler.get());
                    for (size_t k = 0; k < rng.size(); ++k) {
                      output::write_file_atomic(
                          rundir::path(tmp_dir, rundir::rng_state_file(static_cast<int>(k))),
                          rng[k]);
                    }
                  });
  return true;
}

TrainResult result_of(const RunSummary& s);

// The end: the last checkpoint, the run's context, then the Session's finish (its participants'
// sections, summary.json; data-parallel: rank 0 merges the top directory).
// one_process: not after a failure otherwise, as the checkpoint gathers from every process and
// one may be gone.
TrainResult finish(const config::Config& cfg,
                   Training& t,
                   Session& session,
                   const Outcome& outcome,
                   bool one_process) {
  const std::string& dir = session.run_dir();
  const int64_t done = t.first_step() - 1 + session.steps_completed();
  const bool all_here = one_process || outcome.status != RunStatus::kFailed;
  if (cfg.train.save_checkpoint && session.steps_completed() > 0 && all_here &&
      outcome.status != RunStatus::kDiverged) {
    if (save_run_checkpoint(cfg, t, session, rundir::path(dir, rundir::kCheckpoint), done)) {
      spdlog::info("checkpoint {} (step {})", rundir::path(dir, rundir::kCheckpoint), done);
    }
  }
  rundir::RunContext& context = session.context();
  context.data = t.data.figures;
  const int64_t kv_element_bytes = cfg.train.precision == config::Precision::kFp32 ? 4 : 2;
  context.model = t.task->model_figures(kv_element_bytes);
  if (t.resume) context.resumed_from = rundir::ResumeFigures{t.resume->dir, t.resume->step};
  context.init_from = t.init;
  return result_of(session.finish(outcome.status, outcome.message));
}

TrainResult result_of(const RunSummary& s) {
  TrainResult result;
  result.run_dir = s.run_dir;
  result.world_size = s.world_size;
  result.rank_dir = s.rank_dir;
  result.rank_tokens_per_s = s.rank_tokens_per_s;
  result.rank_median_step_ms = s.rank_median_step_ms;
  result.status = s.status;
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

}  // namespace

namespace {

// Data-parallel: a training set too small for the global batch (every rank would repeat
// samples of the others within one step) is the user's to fix (exit 2).
void check_shardable(const config::Config& cfg, const RunData& rd, int world_size) {
  if (world_size <= 1) return;
  const int64_t global = cfg.train.batch_size * world_size;
  // A decoder (GPT, Llama and its family) samples windows of the token stream; DistilBERT's tasks
  // take whole encoded sequences.
  const bool lm = cfg.model.type != config::ModelType::kDistilbert;
  const int64_t available = lm ? static_cast<int64_t>(rd.splits.train.size()) - cfg.model.block_size
                               : rd.train_set.num_sequences;
  if (available >= global) return;
  throw DataError(
      fmt::format("world size {}: the global batch of {} x train.batch_size {} = {} "
                  "{} is more than the {} the training data holds; lower "
                  "train.batch_size or the number of ranks",
                  world_size, world_size, cfg.train.batch_size, global,
                  lm ? "windows" : "sequences", available));
}

// The run directory of this rank: world size 1, the run directory itself; data-parallel,
// <top>/rank<k> under a top directory rank 0 named (session_cfg gets output.name rank<k>).
std::string rank_run_dir(dist::DataParallel* ranks,
                         config::Config& session_cfg,
                         SessionOptions& so) {
  if (!ranks) return "";
  const std::string top = ranks->shared_top_dir(session_cfg, so.output_dir, so.run_label);
  so.output_dir = top;
  session_cfg.output.name = fmt::format("{}{}", rundir::kRankDirPrefix, ranks->rank());
  return top;
}

// After each step (outside its timing): the step's participants decide with this process whether
// to go on (data-parallel: every rank takes the same decision, one all-gather, so a rank that
// diverged or was asked to stop stops them all at the same step). Returns the outcome that ends
// the run, if any; this process's own signal is left to the loop's check.
std::optional<Outcome> agree_after_step(Step& step, std::optional<Outcome> mine, bool signalled) {
  const profile::StepDecision d = step.agree(mine.has_value() || signalled);
  if (mine || !d.stop) return mine;
  return Outcome{d.diverged ? RunStatus::kDiverged : RunStatus::kInterrupted, d.reason};
}

// A signal during set-up or while the run directory was made stops the run before its first
// step. Data-parallel, every rank takes that decision together (one all-gather), as after each
// step: a rank that stopped alone would leave the others in their first all-reduce until
// ddp.timeout_s.
std::optional<Outcome> stop_before_first_step(Session& session, const StopSignals& signals) {
  const int mine = signals.signal();
  if (!session.any_process(mine != 0, "the start")) return std::nullopt;
  if (mine != 0) {
    return Outcome{RunStatus::kInterrupted,
                   fmt::format("stopped by signal {} before the first step", mine)};
  }
  return Outcome{RunStatus::kInterrupted,
                 "another rank was stopped by a signal before the first step"};
}

// The config as trained: a Hugging Face folder's model (or an llmprof checkpoint's tokenizer) at
// model.init_from adopted, validated, the device checked.
config::Config resolve_config(const config::Config& given, RunTokenizer& init_tokenizer) {
  config::Config cfg = given;
  if (is_hf_folder(cfg.model.init_from)) {  // a Hugging Face folder gives model and tokenizer
    for (std::string& note : adopt_hf_model(cfg, cfg.model.init_from, "model.init_from")) {
      cfg.notes.push_back(std::move(note));
    }
  } else if (!cfg.model.init_from.empty()) {
    init_tokenizer = take_checkpoint_tokenizer(cfg, cfg.model.init_from, "model.init_from");
    if (!init_tokenizer.note.empty()) cfg.notes.push_back(init_tokenizer.note);
  }
  config::validate(cfg);
  device::check_device(cfg);
  device::configure_cuda_allocator(cfg);  // before anything (the memory probe) allocates on it
  return cfg;
}

// The step's participants of this run. Data-parallel (the launcher's environment says world size
// > 1): the group forms and the configs are compared before the data is read. The memory probe:
// before the model exists.
struct Participants {
  explicit Participants(const config::Config& cfg)
      : data_parallel(dist::DataParallel::connect(cfg, dist::rank_env_from_environment())),
        probe(cfg.device) {}
  data::Shard shard() const {
    if (!data_parallel) return {0, 1};
    return {data_parallel->rank(), data_parallel->world_size()};
  }
  bool one_process() const { return !data_parallel; }
  std::unique_ptr<dist::DataParallel> data_parallel;  // null: one process
  plan::MemoryProbe probe;
};

// The run directory (data-parallel: <top>/rank<k> under the top directory rank 0 named) and the
// Session writing into it, every participant added.
struct OpenRun {
  std::string top_dir;  // data-parallel: the top directory; else empty
  std::unique_ptr<Session> session;
};

OpenRun open_run(const config::Config& cfg,
                 Training& t,
                 const TrainOptions& opts,
                 Participants& p,
                 const StopSignals& signals) {
  dist::DataParallel* ranks = p.data_parallel.get();
  p.probe.set_model(t.params, t.task->module().buffers());
  p.probe.plan_against(cfg, cfg.model.vocab_size > 0 ? 0 : t.data.tokenizer->vocab_size());
  if (ranks) ranks->start(t.task->module(), t.params, cfg);
  // One rank: a signal during set-up stops it here. Data-parallel: the ranks decide together
  // before the first step (stop_before_first_step), the run directory made.
  if (!ranks && signals.signal() != 0) {
    throw Interrupted(fmt::format(
        "stopped by signal {} during set-up, before the run directory was made", signals.signal()));
  }
  config::Config session_cfg = cfg;
  SessionOptions so = session_options(cfg, *t.task, opts);
  so.first_step = t.first_step();
  OpenRun run;
  run.top_dir = rank_run_dir(ranks, session_cfg, so);
  run.session = std::make_unique<Session>(session_cfg, so, &t.runtime);  // the run directory
  Session& session = *run.session;
  session.add_participant(p.probe);
  if (ranks) {
    if (ranks->rank() == 0) {
      spdlog::info(
          "run {} ({} ranks, each in its {}<k>/; report, plot, check and resume take "
          "this directory)",
          run.top_dir, ranks->world_size(), rundir::kRankDirPrefix);
    }
    // Opens its comm.csv and phases.csv; names the rank in trace.json, on rank 0's clock (the
    // offset measured by the clock ping-pong at the start).
    session.add_participant(*ranks);
    ranks->test_signal_before_first_step();  // test only: nothing unless set
  }
  t.data.tokenizer->save(session.run_dir());
  log_inputs(t);
  return run;
}

// train.cuda_graphs, between steps: eager steps first (library autotuning, optimizer state), then
// the step captured once; from then on each step stages its learning rate into the graph.
void prepare_graph(
    const config::Config& cfg, Training& t, Session& session, const LoopState& s, int64_t n) {
  const int64_t graph_after = t.first_step() - 1 + std::max<int64_t>(1, cfg.profile.warmup_steps);
  if (cfg.train.cuda_graphs && !t.graph && n > graph_after) {
    capture_step(cfg, t, s);
    spdlog::info(
        "train.cuda_graphs: step captured before step {}; from here forward_ms is "
        "the whole replayed step (forward, backward, clip, optimizer)",
        n);
    session.context().cuda_graphs = rundir::CudaGraphFigures{n, "the whole replayed step"};
  }
  if (t.graph) static_cast<FusedAdam&>(*t.optimizer).stage_learning_rates();
}

// The steps, from the run's first to schedule.max_steps or the first reason to stop.
Outcome train_steps(const config::Config& cfg,
                    Training& t,
                    Session& session,
                    const StopSignals& signals) {
  if (std::optional<Outcome> early = stop_before_first_step(session, signals)) return *early;
  // A resumed run skips the micro-batches of the steps before it (the stream is keyed by the
  // global sample index: global batch i is (i x world size + rank) x batch_size onwards).
  data::BatchLoader loader(*t.data.train_sampler, cfg.data.num_workers, cfg.data.prefetch,
                           t.device->slot_memory(),
                           (t.first_step() - 1) * cfg.train.grad_accum_steps);
  LoopState state(cfg.train.grad_accum_steps);
  const int64_t max_steps = cfg.schedule.max_steps;
  if (t.resume) {
    apply_rng_state(t.rng, t.device->device());  // last: the set-up above draws from them too
    spdlog::info("resumed from {} (step {}): steps {}..{}", t.resume->dir, t.resume->step,
                 t.first_step(), max_steps);
  }
  const int64_t eval_every = cfg.train.eval_interval, ckpt_every = cfg.train.checkpoint_interval;
  for (int64_t n = t.first_step(); n <= max_steps; ++n) {  // steps count from 1
    const bool last = n == max_steps;
    const double lr = learning_rate(cfg, n - 1);
    set_learning_rate(*t.optimizer, lr);
    prepare_graph(cfg, t, session, state, n);
    Step step = session.step();  // its row is written as it leaves scope, even on break
    if (t.graph) {
      graph_step(t, step, loader, state);
    } else {
      timed_step(cfg, t, step, loader, state);
    }
    // Read once: the ranks' agreement and the check below must see the same answer, or a
    // signal arriving between the two stops this rank alone while the others go on.
    const bool signalled = signals.signal() != 0;
    if (auto stop = agree_after_step(step, record_loss(cfg, step, state, lr), signalled)) {
      return *stop;
    }
    if (eval_every > 0 && (n % eval_every == 0 || last)) evaluate_step(t, session, step);
    if (cfg.train.save_checkpoint && ckpt_every > 0 && !last && n % ckpt_every == 0) {
      save_run_checkpoint(cfg, t, session, rundir::checkpoint_step_dir(session.run_dir(), n), n);
    }
    if (signalled && !last) {
      return {RunStatus::kInterrupted,
              fmt::format("stopped by signal {} after step {}", signals.signal(), n)};
    }
  }
  return {};
}

}  // namespace

TrainResult run_training(const config::Config& given, const TrainOptions& opts) {
  RunTokenizer init_tokenizer;  // an llmprof run starts from its own tokenizer
  const config::Config cfg = resolve_config(given, init_tokenizer);
  StopSignals signals;  // from here: a signal during set-up stops the run too, not the process
  Participants participants(cfg);
  const data::Shard shard = participants.shard();
  std::optional<ResumePoint> resume;
  if (!cfg.train.resume_from.empty()) {
    resume = check_resume(cfg, static_cast<int>(shard.world_size));
  }
  Training t(cfg, shard, resume);  // set-up: model, data, optimizer, eval batches
  check_run_tokenizer(init_tokenizer, *t.data.tokenizer, cfg.model.init_from);
  check_shardable(cfg, t.data, static_cast<int>(shard.world_size));
  const OpenRun run = open_run(cfg, t, opts, participants, signals);
  Session& session = *run.session;
  Outcome outcome;
  try {
    outcome = train_steps(cfg, t, session, signals);
  } catch (const llmprof::Error& e) {
    finish_failed(session, e.what());
    throw;
  } catch (const std::exception& e) {
    // Keep only the first line of LibTorch's multi-line messages for the summary and the log.
    const std::string what = e.what();
    outcome = {RunStatus::kFailed, what.substr(0, what.find('\n'))};
  }
  try {
    return finish(cfg, t, session, outcome, participants.one_process());
  } catch (const llmprof::Error& e) {  // the checkpoint or a table met a full disk
    finish_failed(session, e.what());
    throw;
  }
}

}  // namespace llmprof::train
