#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include "comm_finish.h"
#include "llmprof/base/stats.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/device.h"
#include "llmprof/dist/clock_sync.h"
#include "llmprof/dist/data_parallel.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/comm_ranks.h"
#include "llmprof/rundir/comm_tables.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "llmprof/rundir/summary.h"

namespace llmprof::dist {

namespace {

// Ping-pong rounds of each clock measurement (the best round counts): ~0.1 ms each on loopback.
constexpr int kClockRounds = 200;

// The resolved config as every rank must share it: the YAML without the run directory's name
// (ranks may be given their own) and the device ordinal (one GPU per rank).
std::string config_hash(const config::Config& cfg) {
  config::Config c = cfg;
  c.device.index = 0;
  c.threads = 0;
  return fmt::format("{:016x}", std::hash<std::string>{}(config::to_yaml(c)));
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

DataParallel::DataParallel(const dist::RankEnv& env, std::unique_ptr<dist::ProcessGroup> group)
    : env_(env), group_(std::move(group)) {}

DataParallel::~DataParallel() = default;

std::unique_ptr<DataParallel> DataParallel::connect(const config::Config& cfg,
                                                    const dist::RankEnv& env) {
  // A torchrun-style environment forms the group even at world size 1, as PyTorch's DDP does
  // under torchrun --nproc_per_node 1 (and as a one-GPU host checks NCCL); a plain run, or one
  // Slurm task (a sweep point under srun), stays a single process without a store.
  const bool one_rank_group = env.world_size == 1 && env.source == dist::EnvSource::kTorchrun;
  if (!env.distributed() && !one_rank_group) return nullptr;
  if (cfg.train.cuda_graphs) {
    throw ConfigError("train.cuda_graphs: not with data-parallel training (world size " +
                          std::to_string(env.world_size) + "): set train.cuda_graphs=false",
                      cfg.source_file, "train.cuda_graphs");
  }
  dist::GroupOptions o;
  o.backend = device::resolve_backend(cfg);
  o.timeout_s = cfg.ddp.timeout_s;
  o.cuda_device = device::cuda_ordinal(cfg.device);
  o.c10d_for_one_rank = one_rank_group;
  std::unique_ptr<DataParallel> dp(new DataParallel(env, dist::ProcessGroup::create(env, o)));
  dp->group_->check_same_config(config_hash(cfg));
  dp->skew_ns_ = dist::test_clock_skew_ns(env.rank);
  dp->forward_delay_ns_ = dist::test_forward_delay_ns(env.rank);
  dp->clocks_start_ =
      dist::measure_clocks(*dp->group_, kClockRounds, [d = dp.get()] { return d->clock_ns(); });
  // Each rank's offset to rank 0's clock (measured on rank 0), for its own trace.
  std::vector<int64_t> offsets(static_cast<size_t>(dp->world_size()), 0);
  for (size_t r = 0; r < dp->clocks_start_.size() && r < offsets.size(); ++r) {
    offsets[r] = dp->clocks_start_[r].offset_ns;
  }
  dp->group_->all_reduce_sum(offsets);
  dp->own_clock_offset_ns_ = offsets[static_cast<size_t>(env.rank)];
  return dp;
}

std::string DataParallel::shared_top_dir(const config::Config& cfg,
                                         const std::string& output_dir,
                                         const std::string& label) {
  // Rank 0's path travels as character codes through an all-gather (exact in doubles); a
  // length of -1 says rank 0 could not make it, and every rank stops (rank 0 with its error).
  constexpr size_t kMaxPath = 4096;
  std::vector<double> mine(kMaxPath + 1, 0.0);
  std::exception_ptr failed;
  if (rank() == 0) {
    try {
      const std::string made = output::create_run_dir(
          output_dir.empty() ? cfg.output.dir : output_dir, cfg.output.name, label);
      if (made.size() > kMaxPath) throw Error("run directory path too long: " + made);
      mine[0] = static_cast<double>(made.size());
      for (size_t i = 0; i < made.size(); ++i) mine[i + 1] = static_cast<unsigned char>(made[i]);
    } catch (const Error&) {
      failed = std::current_exception();
      mine[0] = -1;
    }
  }
  const std::vector<double> all = group_->all_gather(mine);
  if (failed) std::rethrow_exception(failed);
  if (all[0] < 0)
    throw dist::DistError(
        "rank 0 could not create the run directory (its log "
        "says why)",
        0);
  const auto n = static_cast<size_t>(all[0]);
  std::string top(n, '\0');
  for (size_t i = 0; i < n; ++i) top[i] = static_cast<char>(static_cast<int>(all[i + 1]));
  top_dir_ = top;
  return top;
}

void DataParallel::start(torch::nn::Module& module,
                         const std::vector<at::Tensor>& params,
                         const config::Config& cfg) {
  // Parameters and floating-point buffers from rank 0. Gloo refuses bool tensors ("Invalid
  // scalar type"), and the model's other buffers (the causal mask) are built from the config,
  // which every rank shares (checked at connect), so they are equal already.
  std::vector<at::Tensor> tensors = module.parameters();
  for (const at::Tensor& b : module.buffers()) {
    if (b.is_floating_point()) tensors.push_back(b);
  }
  group_->broadcast_tensors(tensors);
  dist::GradSyncOptions o;
  o.bucket_mb = bucket_mb_ = cfg.ddp.bucket_mb;
  o.first_bucket_mb = first_bucket_mb_ = cfg.ddp.first_bucket_mb;
  o.overlap = overlap_ = cfg.ddp.overlap;
  samples_per_step_ =
      static_cast<double>(cfg.train.batch_size * cfg.train.grad_accum_steps * world_size());
  o.backward_start_ns = &backward_start_ns_;
  micro_steps_ = std::max<int64_t>(1, cfg.train.grad_accum_steps);
  params_ = params;
  sync_ = std::make_unique<dist::GradSync>(*group_, params, o);
}

int64_t DataParallel::clock_ns() const { return now_ns() + skew_ns_; }

namespace {
// The phases a span is logged for: the step's four (an eval pass is not one).
bool spanned(profile::Phase phase) { return static_cast<int>(phase) < profile::kNumStepPhases; }
}  // namespace

void DataParallel::on_phase_begin(profile::Phase phase) {
  if (!spanned(phase)) return;
  spans_.begin(phase);
  if (phase == profile::Phase::kForward) {
    micro_sync_ = ++micro_ >= micro_steps_;
    sync_->begin_micro_step(micro_sync_);
  }
  // A sleep, not a busy wait: on a host shared with other work, a rank that spun for the delay
  // is then scheduled behind the others (its CPU share spent), which adds a lag the test did not
  // inject.
  if (phase == profile::Phase::kForward && forward_delay_ns_ > 0) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(forward_delay_ns_));
  }
}

void DataParallel::on_phase_end(profile::Phase phase) {
  if (spanned(phase)) spans_.end();
}

void DataParallel::before_step(int64_t) { micro_ = 0; }

void DataParallel::before_backward(const at::Tensor& loss, bool sync) {
  if (sync != micro_sync_) {
    throw Error(
        fmt::format("data parallelism: a backward with sync={} after forward {} of {} per "
                    "step (train.grad_accum_steps): only the last one synchronises",
                    sync, micro_, micro_steps_));
  }
  backward_start_ns_ = now_ns();
  sync_->prepare_for_backward(loss);
}

void DataParallel::on_backward_error(const std::exception& error) {
  if (dynamic_cast<const dist::DistError*>(&error) != nullptr) return;  // diagnosed already
  throw group_->diagnose(error, "gradient all-reduce");
}

profile::StepDecision DataParallel::after_optimizer(const profile::StepOutcome& mine) {
  write_comm_rows(mine.step);
  const Agreed a = agree_after_step({mine.step, mine.step_ms, mine.loss}, mine.stop_requested);
  profile::StepDecision d;
  if (mine.stop_requested || !a.stop) return d;  // this rank's own reason, or none
  d.stop = true;
  d.diverged = !std::isfinite(a.global_loss);
  d.reason =
      d.diverged
          ? fmt::format("the loss of another rank became non-finite at step {}", mine.step)
          : fmt::format("another rank was stopped by a signal; stopped after step {}", mine.step);
  return d;
}

std::vector<std::string> DataParallel::checkpoint_state(const std::string& mine) {
  return gather_on_rank0(mine);
}

void DataParallel::on_added(const std::string& rank_dir) {
  comm_ = std::make_unique<rundir::CommWriter>(rundir::path(rank_dir, rundir::kComm));
  phase_csv_ =
      std::make_unique<rundir::PhaseSpanWriter>(rundir::path(rank_dir, rundir::kPhaseSpans));
  spans_.clear();
}

std::optional<rundir::TraceDistributed> DataParallel::trace_distributed() const {
  rundir::TraceDistributed d;
  d.rank = rank();
  d.world_size = world_size();
  d.backend = group_->backend();
  d.clock_offset_ns = -own_clock_offset_ns_;  // rank 0's clock minus this rank's
  return d;
}

namespace {
// c10's scalar type names, which Kineto writes as a collective's dtype.
std::string_view kineto_dtype(dist::GradDtype dtype) {
  switch (dtype) {
    case dist::GradDtype::kFloat32:
      return "Float";
    case dist::GradDtype::kFloat16:
      return "Half";
    case dist::GradDtype::kBFloat16:
      return "BFloat16";
    case dist::GradDtype::kFloat64:
      return "Double";
    case dist::GradDtype::kOther:
      break;
  }
  return "Unknown";
}
}  // namespace

std::vector<rundir::CollectiveSlice> DataParallel::collectives_between(int64_t from_ns,
                                                                       int64_t to_ns) const {
  std::vector<rundir::CollectiveSlice> out;
  for (size_t i = 0; i < kept_.size(); ++i) {
    const auto& [step, r] = kept_[i];
    if (r.launch_ns < from_ns || r.launch_ns > to_ns || r.end_ns < 0) continue;
    rundir::CollectiveSlice c;
    c.start_ns = r.launch_ns;
    c.issued_ns = r.issued_ns;
    c.end_ns = r.end_ns;
    c.in_nelems = c.out_nelems = r.numel;  // an all-reduce is in place
    c.dtype = std::string(kineto_dtype(r.dtype));
    c.group_size = world_size();
    c.seq = static_cast<int64_t>(i);  // the gradient all-reduces' order, the same on every rank
    c.step = step;
    c.bucket = r.bucket;
    c.bytes = r.bytes;
    out.push_back(std::move(c));
  }
  return out;
}

rundir::CommRow DataParallel::comm_row(int64_t step,
                                       const dist::BucketRecord& r,
                                       double comm_ms) const {
  rundir::CommRow c;
  c.rank = rank();
  c.step = step;
  c.sync_step = r.sync_step;
  c.bucket = static_cast<int64_t>(r.bucket);
  c.bucket_count = static_cast<int64_t>(r.bucket_count);
  c.first_layout = r.first_layout;
  c.bytes = r.bytes;
  c.elements = r.numel;
  c.dtype = std::string(dist::grad_dtype_name(r.dtype));
  c.ready_ns = r.ready_ns + skew_ns_;
  c.launch_ns = r.launch_ns + skew_ns_;
  if (r.end_ns >= 0) {
    c.end_ns = r.end_ns + skew_ns_;
    c.comm_ms = comm_ms;
  }
  if (r.backward_ns_at_launch >= 0) {
    c.backward_ms_at_launch = static_cast<double>(r.backward_ns_at_launch) * 1e-6;
  }
  return c;
}

void DataParallel::write_comm_rows(int64_t step) {
  StepComm step_comm;
  int64_t bytes = 0;
  std::vector<int64_t> sizes;
  for (const dist::BucketRecord& r : sync_->take_step_records()) {
    if (kept_.size() < kKeptCollectives) kept_.emplace_back(step, r);
    const bool ended = r.end_ns >= 0;
    const double ms = ended ? static_cast<double>(r.end_ns - r.launch_ns) * 1e-6 : NAN;
    if (ended) step_comm.comm_ms += ms;
    step_comm.first_layout = step_comm.first_layout || r.first_layout;
    bytes += r.bytes;
    sizes.push_back(r.bytes);
    if (comm_) comm_->write(comm_row(step, r, ms));
  }
  if (phase_csv_) {
    for (int i = 0; i < spans_.size(); ++i) {
      phase_csv_->write({rank(), step, spans_[i].phase, spans_[i].start_ns + skew_ns_,
                         spans_[i].end_ns + skew_ns_});
    }
  }
  spans_.clear();
  comm_steps_.push_back(step_comm);
  if (!sizes.empty()) {
    bucket_bytes_ = sizes;
    step_bytes_ = bytes;
  }
}

void DataParallel::all_reduce_sums(std::vector<double>& sums,
                                   std::vector<int64_t>& counts,
                                   const char* what) {
  try {
    group_->all_reduce_sum(sums);
    group_->all_reduce_sum(counts);
  } catch (const dist::DistError&) {
    throw;
  } catch (const std::exception& e) {
    throw group_->diagnose(e, what);
  }
}

DataParallel::Agreed DataParallel::agree_after_step(const RankStep& mine, bool stop_requested) {
  std::vector<double> all;
  try {
    all = group_->all_gather({mine.step_ms, mine.loss, stop_requested ? 1.0 : 0.0});
  } catch (const dist::DistError&) {
    throw;
  } catch (const std::exception& e) {
    throw group_->diagnose(e, "step all-gather");
  }
  Agreed a;
  for (int r = 0; r < world_size(); ++r) {
    const size_t at = static_cast<size_t>(r) * 3;
    a.global_loss += all[at + 1] / world_size();
    a.stop = a.stop || all[at + 2] != 0;
  }
  return a;
}

bool DataParallel::any_rank(bool mine, const char* when) {
  std::vector<double> all;
  try {
    all = group_->all_gather({mine ? 1.0 : 0.0});
  } catch (const dist::DistError&) {
    throw;
  } catch (const std::exception& e) {
    throw group_->diagnose(e, fmt::format("all-gather at {}", when));
  }
  return std::any_of(all.begin(), all.end(), [](double v) { return v != 0; });
}

void DataParallel::test_signal_before_first_step() const {
  const char* rank_named = std::getenv("LLMPROF_TEST_SIGINT_BEFORE_FIRST_STEP_RANK");
  if (rank_named != nullptr && *rank_named != '\0' && std::atoi(rank_named) == rank()) {
    std::raise(SIGINT);
  }
}

std::vector<std::string> DataParallel::gather_on_rank0(const std::string& mine) {
  const std::vector<double> lengths = group_->all_gather({static_cast<double>(mine.size())});
  const auto longest = static_cast<size_t>(*std::max_element(lengths.begin(), lengths.end()));
  std::vector<double> padded(longest, 0.0);  // bytes as doubles: exact
  for (size_t i = 0; i < mine.size(); ++i) padded[i] = static_cast<unsigned char>(mine[i]);
  const std::vector<double> all = group_->all_gather(padded);
  std::vector<std::string> out;
  if (rank() != 0) return out;
  for (size_t r = 0; r < lengths.size(); ++r) {
    std::string bytes(static_cast<size_t>(lengths[r]), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>(static_cast<unsigned char>(all[r * longest + i]));
    }
    out.push_back(std::move(bytes));
  }
  return out;
}

rundir::DistributedFigures DataParallel::summary_section() const {
  // The steady steps, as distributed.comm's figures are over (rundir's one rule).
  std::vector<double> steady;
  for (const StepComm* c : rundir::steady_steps(comm_steps_)) steady.push_back(c->comm_ms);
  rundir::DistributedFigures d;
  d.world_size = world_size();
  d.backend = std::string(config::name(group_->backend()));
  d.launcher = std::string(dist::env_source_name(env_.source));
  d.overlap = overlap_;
  d.bucket_mb = bucket_mb_;
  d.first_bucket_mb = first_bucket_mb_;
  d.bucket_bytes = bucket_bytes_;
  d.bytes_per_step = step_bytes_;
  if (!comm_steps_.empty()) d.rank0_comm_ms_first_step = comm_steps_[0].comm_ms;
  if (!steady.empty()) d.rank0_comm_ms_per_step_median = median(steady);
  d.comm_ms_note =
      "summed all-reduce time (launch to completion) of the step's buckets on rank 0; the "
      "median is over the steps after the first bucket layout (every step when there are none), "
      "as distributed.comm's figures are";
  d.times_note =
      "comm.csv and phases.csv times are each rank's steady clock (ns); clocks.csv puts them "
      "on rank 0's, collectives.csv and comm_steps.csv are";
  for (int r = 0; r < world_size(); ++r) d.rank_dirs.push_back(fmt::format("rank{}", r));
  return d;
}

// Rank 0: the communication analysis into its tables and summary["distributed"]["comm"]. A rank's
// records that cannot be read leave the run's other documents whole: the section says why.
void DataParallel::write_comm_analysis(const std::string& top_dir,
                                       rundir::DistributedFigures& distributed) const {
  std::vector<dist::RankClock> clocks;
  for (size_t r = 0; r < clocks_start_.size(); ++r) {
    dist::RankClock c{static_cast<int64_t>(r), clocks_start_[r], std::nullopt};
    if (r < clocks_end_.size()) c.end = clocks_end_[r];
    clocks.push_back(c);
  }
  try {
    distributed.comm = analyse_run_comm(top_dir, clocks);
  } catch (const Error& e) {
    spdlog::warn("communication analysis: {}", e.what());
    distributed.comm_error = e.what();
  }
}

namespace {

// FNV-1a over the bytes of every parameter (on the CPU): equal on every rank of a data-parallel
// run whose ranks stayed in step.
std::string parameter_digest(const std::vector<at::Tensor>& params) {
  uint64_t h = 1469598103934665603ull;
  for (const at::Tensor& p : params) {
    const at::Tensor c = p.detach().to(torch::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
    const size_t n = static_cast<size_t>(c.numel()) * c.element_size();
    for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

// The top directory's comm.csv: every rank's rows in rank order. A rank's file that cannot be
// read is left out with a warning (the communication analysis says why in the summary).
void merge_comm(const std::string& top_dir, int world_size) {
  std::vector<rundir::CommRow> rows;
  for (int r = 0; r < world_size; ++r) {
    const std::string dir = fmt::format("{}/{}{}", top_dir, rundir::kRankDirPrefix, r);
    try {
      for (rundir::CommRow& row : rundir::read_comm(rundir::path(dir, rundir::kComm))) {
        rows.push_back(std::move(row));
      }
    } catch (const Error& e) {
      spdlog::warn("the top directory's {}: {}", rundir::kComm, e.what());
    }
  }
  rundir::write_comm(rundir::path(top_dir, rundir::kComm), rows);
}

}  // namespace

rundir::RunFigures DataParallel::finish(const rundir::RunEnd&) {
  rundir::RunFigures f;
  rundir::DistributedFigures& d = f.distributed.emplace();
  d.rank = rank();
  d.world_size = world_size();
  d.top_dir = top_dir_;
  d.parameter_digest = parameter_digest(params_);
  return f;
}

std::optional<rundir::Summary> DataParallel::merge(const rundir::RunEnd& end) {
  if (end.status == config::RunStatus::kFailed || top_dir_.empty()) return std::nullopt;
  clocks_end_ = dist::measure_clocks(*group_, kClockRounds, [this] { return clock_ns(); });
  comm_.reset();  // every row is on disk
  phase_csv_.reset();
  group_->barrier();
  if (rank() != 0) return std::nullopt;
  namespace fs = std::filesystem;
  merge_comm(top_dir_, world_size());
  // The resolved config and the environment at the top too (rank 0's): `llmprof report` on the
  // top directory checks its --set suggestions against the run's config.
  for (std::string_view doc : {rundir::kConfig, rundir::kEnv}) {
    const std::string from = rundir::path(end.run_dir, doc);
    if (fs::exists(from)) output::write_file_atomic(rundir::path(top_dir_, doc), read_text(from));
  }
  rundir::DistributedFigures d = summary_section();
  write_comm_analysis(top_dir_, d);
  return merge_top_dir(top_dir_, world_size(), samples_per_step_, std::move(d));
}

}  // namespace llmprof::dist
