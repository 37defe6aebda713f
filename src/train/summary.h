// summary.json: status, step counts, timing statistics over the measured (post-warm-up) steps,
// throughput, FLOPs and MFU, final losses, memory, and the profiler's own estimated overhead.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/device/peak.h"
#include "llmprof/rundir/summary.h"
#include "step_row.h"

namespace llmprof::train {

struct EvalPoint {
  int64_t step = 0;
  double train_loss = 0;
  double val_loss = 0;
  double eval_ms = 0;
  std::optional<double> train_accuracy;  // classify only
  std::optional<double> val_accuracy;
};

struct SummaryInputs {
  config::RunStatus status = config::RunStatus::kCompleted;
  std::string message;
  config::ProfileLevel level = config::ProfileLevel::kPhases;
  int64_t max_steps = 0;
  int64_t samples_per_step = 0;  // sequences per optimizer step (batch x grad accumulation)
  int64_t warmup_steps = 0;
  const std::vector<StepRow>* rows = nullptr;
  const std::vector<EvalPoint>* evals = nullptr;
  device::PeakFlops peak;
  double clock_read_ns = 0;
  int64_t parameters = 0;
  double flops_per_step = 0;
  std::string flops_formula;
  double wall_s = 0;
  std::optional<config::TaskKind> task;  // unset: a custom loop
};

// The task as summary.json and the log name it: lm | mlm | classify, or custom when unset.
std::string task_label(const std::optional<config::TaskKind>& task);

// The figures train computes from the rows (session adds energy, the deep profile, notes).
rundir::Summary build_summary(const SummaryInputs& in);

}  // namespace llmprof::train
