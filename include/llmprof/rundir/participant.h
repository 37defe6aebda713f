// A participant of the step (llmprof/profile/participant.h) that also adds to the run directory:
// its own tables from the moment it joins a run, columns of each step's row, summary.json's
// sections at the end, and, for a run of several processes, the process's name and collectives
// in trace.json and the merged documents once every process wrote its own. The figures it hands
// over are typed: rundir's own records (plan's memory reconciliation, dist's figures) and the
// figures of the sources below rundir that rundir writes (telemetry's energy). That is why these
// hooks are declared here and not in profile, which sits below rundir and cannot name them. A
// Session (llmprof/train/session.h) takes one through the same add_participant as any other
// participant and calls these hooks besides the step's:
//
//   hook                 when                                   used by
//   on_added             add_participant (the run directory     dist::DataParallel (comm.csv,
//                        exists)                                phases.csv opened)
//   trace_distributed    add_participant, after on_added        dist::DataParallel (the rank)
//   collectives_between  trace.json written (Session::finish)   dist::DataParallel
//   add_to_row           after each step, before its steps.csv  energy (energy_j, avg_power_w)
//                        row
//   finish               Session::finish, before summary.json   the modules/ops profiler,
//                                                               energy, plan::MemoryProbe,
//                                                               dist::DataParallel
//   merge                Session::finish, after summary.json    dist::DataParallel (rank 0
//                        is written                             merges the top directory)
//
// Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/profile/participant.h"
#include "llmprof/rundir/plan_reconciliation.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/rundir/tables.h"
#include "llmprof/telemetry/energy_figures.h"

namespace llmprof::rundir {

// The run as it ended, as the Session tells its participants.
struct RunEnd {
  std::string run_dir;  // this process's run directory
  // finish: as the caller ended the run; merge: as summary.json says (a table that could not be
  // written makes it failed).
  config::RunStatus status = config::RunStatus::kCompleted;
  std::string message;               // why, when not completed
  int64_t steps = 0;                 // the steps whose rows were written
  int64_t tokens = 0;                // their tokens (or samples)
  double flops = 0;                  // their analytic FLOPs; 0: unknown
  int64_t start_ns = 0, end_ns = 0;  // the run's wall span on now_ns(): the Session's life
};

// What a participant adds to summary.json at the end. Each section has one producer; a section
// left unset is not this participant's.
struct RunFigures {
  std::optional<telemetry::EnergyFigures> energy;  // "energy": the run's energy
  std::optional<MemoryReconciliation> plan;  // "plan": the plan against what was measured
  std::optional<DistributedFigures> distributed;   // "distributed": this rank of several
  // "modules", "flops.counted", "profiler_overhead.deep" and ".trace", "gpu": the modules/ops
  // profiler's (profile.level=modules|ops)
  std::optional<DeepProfileFigures> deep;
};

class RunParticipant : public profile::StepParticipant {
 public:
  ~RunParticipant() override = default;

  // When added to a Session: the run directory this process writes (it exists). A participant
  // with tables of its own opens them here.
  virtual void on_added(const std::string& /*run_dir*/) {}

  // One process of several (data parallelism): its identity in trace.json (distributedInfo:
  // rank, world size, backend; its events on pid = rank, on rank 0's clock through
  // clock_offset_ns). Asked once, when added (after on_added); the first participant that
  // answers names the process. nullopt: not one of several.
  virtual std::optional<TraceDistributed> trace_distributed() const { return std::nullopt; }
  // The collectives this process launched within [from_ns, to_ns] of its own clock, as trace
  // slices (trace.json's communication track), asked of the participant that answered
  // trace_distributed when the trace is written: at Session::finish, after the run.
  virtual std::vector<CollectiveSlice> collectives_between(int64_t /*from_ns*/,
                                                           int64_t /*to_ns*/) const {
    return {};
  }

  // After a step, outside its timing and once its device time is known, before its steps.csv row
  // is written: timing is the step's record, end_ns when the step ended (on a CUDA device, when
  // the device finished it; never before timing.end_ns). Sets the columns it measures.
  virtual void add_to_row(const profile::StepRecord& /*timing*/,
                          int64_t /*end_ns*/,
                          StepRow& /*row*/) {}

  // The end of the run (Session::finish), before summary.json is composed: stops what still runs,
  // writes the tables it still holds and returns its sections. An llmprof::Error thrown here
  // makes the run failed with that reason; the summary is still written.
  virtual RunFigures finish(const RunEnd& /*end*/) { return {}; }

  // After this process's summary.json is written: a participant that spans processes waits for
  // the others and merges the run at its top directory. Returns the merged summary as written,
  // where this process wrote it (data parallelism: rank 0), else nullopt. Not called when a table
  // could not be written, nor when the Session ends without finish() (its destructor).
  virtual std::optional<Summary> merge(const RunEnd& /*end*/) { return std::nullopt; }
};

}  // namespace llmprof::rundir
