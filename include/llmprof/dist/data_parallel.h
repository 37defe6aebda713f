// Data-parallel training (world size > 1, from the launcher's environment) as one participant of
// the instrumented step (llmprof/profile/participant.h, llmprof/rundir/participant.h): the
// process group of the run, the config check, the shared run directory, the parameter
// broadcast, DDP's gradient sync with its per-bucket records (comm.csv) and phase spans
// (phases.csv), the ranks' decision after each step, sums over ranks, the rank's section of its
// summary.json and the merged documents at the top of the run directory. `llmprof train` and a
// user's own loop on llmprof::Session use it alike:
//
//   auto dp = llmprof::dist::DataParallel::connect(cfg, dist::rank_env_from_environment());
//   dp->start(model, model.parameters(), cfg);             // rank 0's weights, DDP's reducer
//   const std::string top = dp->shared_top_dir(cfg, "", "run");  // each rank: <top>/rank<k>
//   Session session(rank_cfg, options);  session.add_participant(*dp);  // comm.csv, phases.csv
//   ... step.backward(loss); ... step.agree(false) ...     // every step
//   RunSummary s = session.finish();  // the rank's summary, a barrier, rank 0 merges the top
//
// Torch-free: tensors and modules are forward-declared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/dist/comm_analysis.h"
#include "llmprof/dist/grad_sync.h"
#include "llmprof/dist/phase_log.h"
#include "llmprof/dist/process_group.h"
#include "llmprof/dist/rank_env.h"
#include "llmprof/profile/participant.h"
#include "llmprof/rundir/participant.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/rundir/tables.h"

namespace llmprof::config {
struct Config;
}
namespace llmprof::rundir {
class CommWriter;
class PhaseSpanWriter;
}

namespace llmprof::dist {

// One step's figures on this rank, gathered for the ranks' common decision after it.
struct RankStep {
  int64_t step = 0;
  double step_ms = 0;  // this rank's timed step (wall clock around it)
  double loss = 0;     // this rank's loss
};

// A participant of the step (llmprof/rundir/participant.h): it opens its tables when added to a
// Session, logs each phase's span, arms the gradient all-reduce around each backward, takes the
// ranks' decision after the optimizer, gathers a checkpoint's random state on rank 0, gives the
// rank's summary its distributed section and, after it, merges the run at the top on rank 0.
class DataParallel : public rundir::RunParticipant {
 public:
  // Null for a world size of 1 (env not distributed). Forms the process group (ddp.timeout_s,
  // ddp.backend; auto = gloo on cpu, nccl on cuda) and checks that every rank has the same
  // resolved config (exit 2 naming the ranks that differ).
  static std::unique_ptr<DataParallel> connect(const config::Config& cfg, const dist::RankEnv& env);
  ~DataParallel() override;
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  dist::ProcessGroup& group() { return *group_; }

  // The top run directory: rank 0 creates it (output.dir / output.name or <label>-<time>) and
  // every rank receives its path, so all agree. Each rank's own run directory is <top>/rank<k>;
  // the merge at the end writes the top.
  std::string shared_top_dir(const config::Config& cfg,
                             const std::string& output_dir,
                             const std::string& label);

  // After the model is on its device: rank 0's parameters and buffers to every rank, then DDP's
  // reducer over params.
  void start(torch::nn::Module& module,
             const std::vector<at::Tensor>& params,
             const config::Config& cfg);
  dist::GradSync& sync() { return *sync_; }

  // The step's hooks. Each phase's span into fixed slots (phases.csv after the step); TEST ONLY
  // (LLMPROF_TEST_FORWARD_DELAY_MS): the rank named sleeps inside its forward span.
  std::string_view name() const override { return "data parallelism"; }
  void on_phase_begin(profile::Phase phase) override;
  void on_phase_end(profile::Phase phase) override;
  // Each forward begins a micro-step as DDP's forward does (the bucket rebuild once, no_sync on
  // all but the last of train.grad_accum_steps); each backward arms the reducer for it.
  void before_step(int64_t step) override;
  void before_backward(const at::Tensor& loss, bool sync) override;
  // A failed all-reduce: the group's diagnosis (the dead or stopped rank), thrown.
  void on_backward_error(const std::exception& error) override;
  // The step's bucket rows (comm.csv), then the ranks' common decision (one all-gather): a rank
  // that diverged or was asked to stop stops them all at the same step.
  profile::StepDecision after_optimizer(const profile::StepOutcome& mine) override;
  bool any_process(bool mine, const char* when) override { return any_rank(mine, when); }
  void sum_over_processes(std::vector<double>& sums,
                          std::vector<int64_t>& counts,
                          const char* what) override {
    all_reduce_sums(sums, counts, what);
  }
  // Every rank's state to rank 0 (gather_on_rank0); the other ranks write no checkpoint.
  std::vector<std::string> checkpoint_state(const std::string& mine) override;

  // Added to a Session: opens <rank dir>/comm.csv and phases.csv (rows appended and flushed per
  // step).
  void on_added(const std::string& rank_dir) override;
  // The end, before the rank's summary.json: its "distributed" section (rank, world size, top
  // directory, the parameters' digest, equal on every rank that stayed in step).
  rundir::RunFigures finish(const rundir::RunEnd& end) override;
  // After the rank's summary.json (every rank; not after a failure, a peer may be gone): the
  // clocks measured again, the tables closed, a barrier, then rank 0 writes the merged steps.csv,
  // eval.csv, comm.csv, the communication analysis (clocks.csv, collectives.csv, comm_steps.csv),
  // config.yaml, env.json and summary.json at the top. Returns rank 0's merged summary (nullopt
  // on the other ranks, or without a top directory: shared_top_dir was not called).
  std::optional<rundir::Summary> merge(const rundir::RunEnd& end) override;

  // After a step (outside its timing): the step's bucket records into comm.csv and its phase
  // spans into phases.csv, on this rank's clock (test skew included).
  void write_comm_rows(int64_t step);

  // This rank's trace identity (distributedInfo; clock_offset_ns: rank 0's clock minus this
  // rank's, as measured at the start, clocks.csv) and the gradient all-reduces launched within
  // [from_ns, to_ns] of this rank's clock as trace slices (the first kKeptCollectives of the run
  // are kept for it): the Session's trace.json of the rank.
  std::optional<rundir::TraceDistributed> trace_distributed() const override;
  std::vector<rundir::CollectiveSlice> collectives_between(int64_t from_ns,
                                                           int64_t to_ns) const override;
  static constexpr size_t kKeptCollectives = 65536;

  // Element-wise sums over ranks, in place (an eval's loss sum and counts, sharded by rows);
  // `what` names the sums in a diagnosed error.
  void all_reduce_sums(std::vector<double>& sums, std::vector<int64_t>& counts, const char* what);
  // The mean of the ranks' losses and whether any rank asked to stop, for the same decision on
  // every rank.
  struct Agreed {
    double global_loss = 0;
    bool stop = false;
  };
  Agreed agree_after_step(const RankStep& mine, bool stop_requested);
  // Whether any rank says yes (one all-gather); `when` names the point in an error.
  bool any_rank(bool mine, const char* when);
  // TEST ONLY (LLMPROF_TEST_SIGINT_BEFORE_FIRST_STEP_RANK=k): rank k raises SIGINT at itself
  // just before the ranks' decision before the first step, a fixed point rather than timing luck.
  void test_signal_before_first_step() const;

  // Every rank's bytes (any length) to rank 0, in rank order; other ranks get an empty list.
  // Two all-gathers: the lengths, then the bytes padded to the longest.
  std::vector<std::string> gather_on_rank0(const std::string& mine);

 private:
  DataParallel(const dist::RankEnv& env, std::unique_ptr<dist::ProcessGroup> group);
  rundir::DistributedFigures summary_section() const;
  // A bucket's all-reduce as comm.csv's row, on this rank's clock (test skew included).
  rundir::CommRow comm_row(int64_t step, const dist::BucketRecord& r, double comm_ms) const;
  int64_t clock_ns() const;  // this rank's clock: now_ns() plus the test-only skew
  void write_comm_analysis(const std::string& top_dir,
                           rundir::DistributedFigures& distributed) const;

  dist::RankEnv env_;
  std::unique_ptr<dist::ProcessGroup> group_;
  std::unique_ptr<dist::GradSync> sync_;
  std::string top_dir_;             // shared_top_dir's
  std::vector<at::Tensor> params_;  // start's: the digest at the end
  std::unique_ptr<rundir::CommWriter> comm_;
  std::unique_ptr<rundir::PhaseSpanWriter> phase_csv_;
  dist::PhaseLog spans_;
  int64_t backward_start_ns_ = 0;  // read at each bucket's launch (backward_ns_at_launch)
  int64_t micro_steps_ = 1;        // micro-batches per optimizer step (train.grad_accum_steps)
  int64_t micro_ = 0;              // forwards begun in this step
  bool micro_sync_ = true;         // whether the micro-step begun synchronises
  int64_t skew_ns_ = 0;            // test only: added to every time this rank records
  int64_t forward_delay_ns_ = 0;   // test only: slept in each forward phase
  // Rank 0: every rank's clock against rank 0's, measured at connect and at finish.
  std::vector<dist::ClockEstimate> clocks_start_, clocks_end_;
  int64_t own_clock_offset_ns_ = 0;  // this rank's clock minus rank 0's (start estimate)
  bool overlap_ = true;
  double samples_per_step_ = 0;  // all ranks' samples in one step
  double bucket_mb_ = 0, first_bucket_mb_ = 0;
  // This rank: per step, the summed all-reduce time of its buckets (end - launch), ms, and whether
  // they were the first bucket layout's (rundir::steady_steps keeps the steps after it).
  struct StepComm {
    double comm_ms = 0;
    bool first_layout = false;
  };
  std::vector<StepComm> comm_steps_;
  std::vector<int64_t> bucket_bytes_;  // the last layout's bucket sizes, bytes
  // The run's first all-reduces with their step, for the trace (written after the run).
  std::vector<std::pair<int64_t, dist::BucketRecord>> kept_;
  int64_t step_bytes_ = 0;  // bytes all-reduced in the last synchronising step
};

}  // namespace llmprof::dist
