#include "llmprof/train/trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <optional>

#include "deep_profile.h"
#include "llmprof/base/clock.h"
#include "llmprof/config/schema.h"
#include "llmprof/data/loader.h"
#include "llmprof/error.h"
#include "llmprof/model/autocast.h"
#include "llmprof/model/flops.h"
#include "llmprof/output/log.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/profile/phase.h"
#include "llmprof/profile/stats.h"
#include "llmprof/telemetry/energy_monitor.h"
#include "llmprof/train/env.h"
#include "llmprof/train/run_data.h"
#include "llmprof/train/runtime.h"
#include "llmprof/train/setup.h"
#include "llmprof/train/task.h"
#include "llmprof/train/weights.h"
#include "progress.h"
#include "summary.h"

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

TrainResult run_training(const config::Config& cfg, const TrainOptions& opts) {
  config::validate(cfg);
  check_device(cfg);
  const profile::Level level = profile::parse_level(cfg.profile.level);
  const bool bf16 = cfg.train.precision == "bf16";

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
  const int64_t B = cfg.train.batch_size, T = cfg.model.block_size, A = cfg.train.grad_accum_steps;
  const double flops_per_step =
      task->train_flops_per_step(B, A, cfg.train.activation_checkpointing);

  // Energy sources are probed now; sampling runs on its own thread during the steps.
  std::unique_ptr<telemetry::EnergyMonitor> energy;
  if (cfg.energy.enabled) energy = std::make_unique<telemetry::EnergyMonitor>(cfg.energy, 0);

  PeakFlops peak;
  if (cfg.profile.peak_flops_per_s > 0) {
    peak = {cfg.profile.peak_flops_per_s, "configured", "profile.peak_flops_per_s"};
  } else {
    peak = measure_matmul_peak(bf16 ? "bf16" : "fp32", 2048, 5);
  }
  const double clock_read_ns = profile::measure_clock_read_ns();

  // -- run directory ---------------------------------------------------------------------------
  const std::string parent = opts.output_dir.empty() ? cfg.output.dir : opts.output_dir;
  TrainResult result;
  result.run_dir = output::create_run_dir(parent, cfg.output.name, opts.run_label);
  const std::string dir = result.run_dir;
  output::add_log_file(dir + "/log.txt");
  output::write_file_atomic(dir + "/config.yaml", config::to_yaml(cfg));
  rd.tokenizer->save(dir);
  nlohmann::json env = collect_env(cfg, runtime, peak, opts);
  env["energy"] = energy ? energy->availability_json()
                         : nlohmann::json{{"enabled", false}, {"reason", "energy.enabled=false"}};
  output::write_file_atomic(dir + "/env.json", env.dump(2) + "\n");
  StepsCsv steps_csv(dir + "/steps.csv");
  EvalCsv eval_csv(dir + "/eval.csv");

  spdlog::info("run directory {}", dir);
  for (const std::string& note : cfg.notes) spdlog::warn("config: {}", note);
  spdlog::info("data: {} ({} bytes), {} tokenizer, vocab {}, {}", rd.source, rd.corpus_bytes,
               rd.tokenizer->name(), rd.tokenizer->vocab_size(), rd.description);
  spdlog::info("model: {}, {} parameters; task {}, {} {}, {} threads", task->describe(),
               task->num_parameters(), task->name(), cfg.optim.name, cfg.train.precision,
               runtime.threads);
  if (init) {
    spdlog::info("init_from {} ({} task, step {}): {} tensors loaded, {} kept at init{}{}",
                 init->path, init->task, init->step, init->loaded, init->missing.size(),
                 init->missing.empty() ? "" : fmt::format(" ({})", fmt::join(init->missing, ", ")),
                 init->unexpected.empty()
                     ? ""
                     : fmt::format(", {} unused ({})", init->unexpected.size(),
                                   fmt::join(init->unexpected, ", ")));
  }
  spdlog::info("blas: {} ({}); peak {:.1f} GFLOP/s ({}: {})", runtime.blas_config,
               runtime.blas_parallel, peak.flops_per_s * 1e-9, peak.source, peak.method);
  if (energy) {
    for (const auto& line : energy->availability_lines()) spdlog::info("{}", line);
  }

  data::BatchLoader loader(*rd.train_sampler, cfg.data.num_workers, cfg.data.prefetch);
  const EvalSet eval_train = make_train_eval_set(cfg, rd, "train");
  const EvalSet eval_val = make_train_eval_set(cfg, rd, "val");

  // -- preallocated loop state -----------------------------------------------------------------
  const int64_t max_steps = cfg.schedule.max_steps;
  std::vector<StepRow> rows;
  rows.reserve(static_cast<size_t>(max_steps));
  std::vector<EvalPoint> evals;
  std::vector<torch::Tensor> micro_loss(static_cast<size_t>(A));
  torch::Tensor grad_norm;
  profile::PhaseRecorder recorder(level >= profile::Level::kPhases);
  DeepProfile deep(cfg, task->scope_forward_flops(B), peak.flops_per_s, dir);  // modules/ops
  Progress progress(max_steps, opts.quiet);
  StopSignals signals;
  std::string status = "completed", message;
  if (energy) energy->start();  // its first sample precedes the run's start
  const int64_t wall_start_ns = now_ns();

  try {
    data::BatchView held;  // the last micro-batch, handed back at the next data phase
    bool holding = false;
    for (int64_t step = 1; step <= max_steps; ++step) {  // step numbers count from 1 everywhere
      StepRow row;
      row.lr = learning_rate(cfg, step - 1);
      set_learning_rate(*optimizer, row.lr);
      deep.before_step(step, recorder);
      const telemetry::RusageSnapshot ru_before = telemetry::read_rusage();

      // ---- timed step: no allocation, I/O, formatting or host sync beyond training's own ----
      recorder.begin_step(step);
      for (int64_t micro = 0; micro < A; ++micro) {
        data::BatchView batch;
        Batch b;
        torch::Tensor loss;
        {
          // The previous batch's slot goes back here, so refilling it is data time and the data
          // phase runs once per micro-batch, where the batch is taken.
          profile::ScopedPhase phase(recorder, profile::Phase::kData);
          if (holding) loader.release(held);
          batch = loader.next();
          b = wrap_batch(batch);
        }
        {
          profile::ScopedPhase phase(recorder, profile::Phase::kForward);
          model::CpuAutocastScope autocast(bf16);
          loss = task->loss(b);
          if (A > 1) loss = loss / static_cast<double>(A);
        }
        {
          profile::ScopedPhase phase(recorder, profile::Phase::kBackward);
          loss.backward();
        }
        micro_loss[static_cast<size_t>(micro)] = loss.detach();
        held = batch;  // backward is done with it (embedding, mask, loss); released next phase
        holding = true;
      }
      {
        profile::ScopedPhase phase(recorder, profile::Phase::kOptimizer);
        if (cfg.optim.grad_clip > 0) grad_norm = clip_grad_norm(params, cfg.optim.grad_clip);
        optimizer->step();
        zero_grad_to_none(params);
      }
      recorder.end_step();
      // ---- end of timed step ----

      row.rusage = telemetry::rusage_delta(ru_before, telemetry::read_rusage());
      row.timing = recorder.record();
      deep.after_step(row.timing, row.rusage.max_rss_bytes, recorder);
      row.phases_timed = recorder.enabled();
      row.tokens = B * T * A;
      row.flops = flops_per_step;
      row.peak_flops_per_s = peak.flops_per_s;
      row.loss = 0;
      for (const auto& l : micro_loss) row.loss += l.item<double>();  // sync: loss read once, after timing
      row.grad_norm = cfg.optim.grad_clip > 0 ? grad_norm.item<double>() : NAN;
      if (energy) {
        const telemetry::IntervalEnergy e = energy->step_energy(row.timing.start_ns, row.timing.end_ns);
        row.energy_j = e.joules;
        row.avg_power_w = e.avg_power_w;
        row.energy_estimated = e.estimated;
      }

      if (!std::isfinite(row.loss)) {
        status = "diverged";
        message = fmt::format("loss became {} at step {} (lr {:.3g}): lower optim.lr, raise "
                              "schedule.warmup_steps or set optim.grad_clip",
                              std::isnan(row.loss) ? "nan" : (row.loss > 0 ? "inf" : "-inf"), step,
                              row.lr);
        rows.push_back(row);
        steps_csv.write(row);
        break;
      }

      const bool last = step == max_steps;
      const bool do_eval = cfg.train.eval_interval > 0 &&
                           (step % cfg.train.eval_interval == 0 || last);
      if (do_eval) {
        const int64_t t0 = now_ns();
        const EvalSums tr = evaluate(*task, eval_train, bf16), va = evaluate(*task, eval_val, bf16);
        EvalPoint e{step, tr.mean_loss(), va.mean_loss(), 0, accuracy_of(*task, tr),
                    accuracy_of(*task, va)};
        e.eval_ms = static_cast<double>(now_ns() - t0) * 1e-6;
        row.eval_ms = e.eval_ms;
        eval_csv.write(step, "train", e.train_loss, e.train_accuracy, e.eval_ms);
        eval_csv.write(step, "val", e.val_loss, e.val_accuracy, e.eval_ms);
        evals.push_back(e);
        progress.eval(step, e.train_loss, e.val_loss, e.eval_ms);
      }
      rows.push_back(row);
      steps_csv.write(row);
      if (cfg.train.save_checkpoint && cfg.train.checkpoint_interval > 0 && !last &&
          step % cfg.train.checkpoint_interval == 0) {
        save_checkpoint(fmt::format("{}/checkpoint-step{}", dir, step), task->module(), cfg,
                        task->name(), step);
      }
      progress.step(step, row.loss, step_ms(row), static_cast<double>(row.tokens) / (step_ms(row) * 1e-3));

      if (signals.signal() != 0 && !last) {
        status = "interrupted";
        message = fmt::format("stopped by signal {} after step {}", signals.signal(), step);
        break;
      }
    }
  } catch (const llmprof::Error&) {
    throw;
  } catch (const std::exception& e) {
    status = "failed";
    message = e.what();
    // Keep only the first line of LibTorch's multi-line messages for the summary and the log.
    message = message.substr(0, message.find('\n'));
  }
  progress.finish();
  deep.finish();
  if (cfg.train.save_checkpoint && !rows.empty() && status != "diverged") {
    save_checkpoint(dir + "/checkpoint", task->module(), cfg, task->name(),
                    static_cast<int64_t>(rows.size()));
    spdlog::info("checkpoint {}/checkpoint (step {})", dir, rows.size());
  }
  const int64_t wall_end_ns = now_ns();
  if (energy) energy->stop();

  SummaryInputs in;
  in.status = status;
  in.message = message;
  in.level = std::string(profile::level_name(level));
  in.max_steps = max_steps;
  in.samples_per_step = B * A;
  in.warmup_steps = cfg.profile.warmup_steps;
  in.rows = &rows;
  in.evals = &evals;
  in.peak = peak;
  in.clock_read_ns = clock_read_ns;
  in.parameters = task->num_parameters();
  in.flops_per_step = flops_per_step;
  in.flops_formula = task->flops_formula(cfg.train.activation_checkpointing);
  in.task = task->name();
  in.wall_s = static_cast<double>(wall_end_ns - wall_start_ns) * 1e-9;
  nlohmann::json summary = build_summary(in);
  summary["data"] = rd.report;
  summary["config_notes"] = cfg.notes;
  if (init) {
    summary["init_from"] = {{"path", init->path}, {"task", init->task}, {"step", init->step},
                            {"loaded", init->loaded}, {"missing", init->missing},
                            {"unexpected", init->unexpected}};
  }
  if (energy) {
    std::vector<telemetry::PhaseSpan> spans;
    int64_t tokens = 0;
    for (const StepRow& r : rows) {
      tokens += r.tokens;
      for (int i = 0; i < r.timing.num_intervals; ++i) {
        const profile::PhaseInterval& iv = r.timing.intervals[i];
        spans.push_back({std::string(profile::phase_name(iv.phase)), iv.start_ns, iv.end_ns});
      }
    }
    summary["energy"] = energy->summary_json(tokens, flops_per_step * static_cast<double>(rows.size()),
                                             wall_start_ns, wall_end_ns, spans);
    energy->write_power_csv(dir + "/power.csv");
  } else {
    summary["energy"] = {{"total_j", nullptr}, {"reason", "energy.enabled=false"}};
  }
  deep.add_to_summary(summary, flops_per_step);
  if (!summary["mfu"]["value"].is_null() && summary["mfu"]["value"]["median"].get<double>() > 1.0) {
    // More than the peak is impossible: the calibration ran while the cores were busy.
    const std::string warning = fmt::format(
        "MFU {:.0f}% exceeds 100%: the peak ({:.1f} GFLOP/s, {}) was measured on a busy machine; "
        "measure it when idle (llmprof peak) and pass --set profile.peak_flops_per_s=...",
        summary["mfu"]["value"]["median"].get<double>() * 100, peak.flops_per_s * 1e-9, peak.source);
    summary["mfu"]["warning"] = warning;
    spdlog::warn("{}", warning);
  }
  result.top_ops = deep.top_ops_lines(15);
  output::write_file_atomic(dir + "/summary.json", summary.dump(2) + "\n");

  result.status = status;
  result.message = message;
  result.steps_completed = static_cast<int64_t>(rows.size());
  result.final_train_loss = rows.empty() ? NAN : rows.back().loss;
  if (!evals.empty()) result.final_val_loss = evals.back().val_loss;
  const auto& st = summary["timing"]["step_ms"];
  if (!st.is_null()) {
    result.median_step_ms = st["median"].get<double>();
    result.tokens_per_s = summary["throughput"]["tokens_per_s"]["median"].get<double>();
    if (!summary["mfu"]["value"].is_null()) {
      result.mfu = summary["mfu"]["value"]["median"].get<double>();
    }
  }
  if (status == "completed") {
    spdlog::info("completed {} steps", result.steps_completed);
  } else {
    spdlog::error("run {}: {}", status, message);
  }
  output::remove_log_file();
  return result;
}

}  // namespace llmprof::train
