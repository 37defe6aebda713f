// The one extension point of the instrumented step (llmprof/train/session.h): a participant is
// told of each step, each phase and each backward, and may take part in the decision to go on
// after a step, in sums over processes and in a checkpoint. One that also adds to the run
// directory (a step row's columns, summary.json's sections at the end, a merged run of several
// processes) is a rundir::RunParticipant (llmprof/rundir/participant.h), which derives from this
// class: its figures are rundir's types, which profile, below rundir, cannot name. The
// modules/ops profiler and energy (the Session's own, added first, in that order), the memory
// probe (plan) and data parallelism (dist) are participants. A Session calls them all, in the
// order added, and none replaces another. Every hook has a default that does nothing, so a
// participant overrides only what it uses. Torch-free: a tensor is forward-declared.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/profile/phase.h"

namespace at {
class Tensor;
}

namespace llmprof::profile {

// A step as its participants see it after the optimizer (outside the timed step).
struct StepOutcome {
  int64_t step = 0;             // counts from 1
  double step_ms = 0;           // this process's timed step
  double loss = 0;              // this process's loss (NaN/inf: diverged)
  bool stop_requested = false;  // this process wants to stop after it (diverged, a signal)
};

// A participant's answer after a step: stop, and why (the run's status follows the caller's
// reason when it asked to stop itself).
struct StepDecision {
  bool stop = false;
  bool diverged = false;  // another process's loss became non-finite
  std::string reason;     // why, naming the other process when it was another's decision
};

class StepParticipant : public PhaseObserver {
 public:
  ~StepParticipant() override = default;

  // Its name, for errors and the participants' list in a log line ("memory probe", "ddp").
  virtual std::string_view name() const = 0;

  // Between steps, before the step's clock starts and after it stops (number counts from 1).
  virtual void before_step(int64_t /*step*/) {}
  virtual void after_step(const StepRecord& /*record*/) {}

  // Each timed phase, outside its own clock reads (PhaseObserver).
  void on_phase_begin(Phase /*phase*/) override {}
  void on_phase_end(Phase /*phase*/) override {}

  // Around one micro-batch's backward (Step::backward). sync = false: gradients accumulate
  // locally (DDP's no_sync, every micro-batch of an accumulation but the last).
  virtual void before_backward(const at::Tensor& /*loss*/, bool /*sync*/) {}
  // A backward that threw (not an llmprof::Error): a participant that knows better throws its
  // own diagnosis (data parallelism names the rank that died); returning leaves the error as is.
  virtual void on_backward_error(const std::exception& /*error*/) {}

  // After the optimizer and the step's loss (outside the timed step): whether to go on. Every
  // participant is asked; the first that says stop decides.
  virtual StepDecision after_optimizer(const StepOutcome& /*mine*/) { return {}; }

  // Whether any process says yes (one all-gather where there are several); `when` names the point
  // in an error. A run's decision before its first step.
  virtual bool any_process(bool mine, const char* /*when*/) { return mine; }
  // Element-wise sums over every process, in place (an eval's loss sum and counts, each process
  // holding its share of the rows); `what` names them in an error.
  virtual void sum_over_processes(std::vector<double>& /*sums*/,
                                  std::vector<int64_t>& /*counts*/,
                                  const char* /*what*/) {}

  // A checkpoint: this process's state bytes in, every process's out in rank order (a
  // data-parallel run gathers them on rank 0); empty: this process writes no checkpoint.
  virtual std::vector<std::string> checkpoint_state(const std::string& mine) { return {mine}; }
};

}  // namespace llmprof::profile
