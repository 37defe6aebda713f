#include "data_parallel.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "llmprof/output/csv.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/files.h"
#include "llmprof/train/task.h"

namespace llmprof::train {

namespace {

dist::Backend backend_of(const config::Config& cfg) {
  switch (cfg.ddp.backend) {
    case config::DdpBackend::kGloo:
      return dist::Backend::kGloo;
    case config::DdpBackend::kNccl:
      return dist::Backend::kNccl;
    case config::DdpBackend::kAuto:
      break;
  }
  return cfg.device.is_cuda() ? dist::Backend::kNccl : dist::Backend::kGloo;
}

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

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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
  o.backend = backend_of(cfg);
  o.timeout_s = cfg.ddp.timeout_s;
  o.cuda_device = cfg.device.is_cuda() ? static_cast<int>(cfg.device.index) : -1;
  o.c10d_for_one_rank = one_rank_group;
  std::unique_ptr<DataParallel> dp(new DataParallel(env, dist::ProcessGroup::create(env, o)));
  dp->group_->check_same_config(config_hash(cfg));
  return dp;
}

std::string DataParallel::shared_top_dir(const config::Config& cfg, const std::string& output_dir,
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
  if (all[0] < 0) throw dist::DistError("rank 0 could not create the run directory (its log "
                                        "says why)", 0);
  const auto n = static_cast<size_t>(all[0]);
  std::string top(n, '\0');
  for (size_t i = 0; i < n; ++i) top[i] = static_cast<char>(static_cast<int>(all[i + 1]));
  return top;
}

void DataParallel::start(torch::nn::Module& module, const std::vector<at::Tensor>& params,
                         const config::Config& cfg, const int64_t* backward_start_ns) {
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
  o.backward_start_ns = backward_start_ns;
  sync_ = std::make_unique<dist::GradSync>(*group_, params, o);
}

void DataParallel::open_comm_csv(const std::string& rank_dir) {
  comm_ = std::make_unique<output::CsvWriter>(
      rundir::path(rank_dir, rundir::kComm),
      std::vector<std::string>{"rank", "step", "sync_step", "bucket", "bucket_count",
                               "first_layout", "bytes", "elements", "dtype", "ready_ns",
                               "launch_ns", "end_ns", "comm_ms", "backward_ms_at_launch"});
}

void DataParallel::write_comm_rows(int64_t step) {
  double comm_ms = 0;
  int64_t bytes = 0;
  std::vector<int64_t> sizes;
  for (const dist::BucketRecord& r : sync_->take_step_records()) {
    const bool ended = r.end_ns >= 0;
    const double ms = ended ? static_cast<double>(r.end_ns - r.launch_ns) * 1e-6 : NAN;
    if (ended) comm_ms += ms;
    bytes += r.bytes;
    sizes.push_back(r.bytes);
    if (!comm_) continue;
    comm_->add(static_cast<int64_t>(rank())).add(step).add(r.sync_step)
        .add(static_cast<int64_t>(r.bucket)).add(static_cast<int64_t>(r.bucket_count))
        .add(static_cast<int64_t>(r.first_layout)).add(r.bytes).add(r.numel)
        .add(dist::grad_dtype_name(r.dtype)).add(r.ready_ns).add(r.launch_ns);
    if (ended) {
      comm_->add(r.end_ns).add(ms);
    } else {
      comm_->add_null().add_null();
    }
    if (r.backward_ns_at_launch >= 0) {
      comm_->add(static_cast<double>(r.backward_ns_at_launch) * 1e-6);
    } else {
      comm_->add_null();
    }
    comm_->end_row();
  }
  comm_ms_.push_back(comm_ms);
  if (!sizes.empty()) {
    bucket_bytes_ = sizes;
    step_bytes_ = bytes;
  }
}

void DataParallel::all_reduce(EvalSums& sums) {
  try {
    std::vector<double> loss{sums.loss_sum};
    std::vector<int64_t> counts{sums.targets, sums.correct, sums.batches, sums.rows, sums.tokens};
    group_->all_reduce_sum(loss);
    group_->all_reduce_sum(counts);
    sums.loss_sum = loss[0];
    sums.targets = counts[0];
    sums.correct = counts[1];
    sums.batches = counts[2];
    sums.rows = counts[3];
    sums.tokens = counts[4];
  } catch (const dist::DistError&) {
    throw;
  } catch (const std::exception& e) {
    throw group_->diagnose(e, "eval all-reduce");
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
  std::vector<double> row;
  for (int r = 0; r < world_size(); ++r) {
    const size_t at = static_cast<size_t>(r) * 3;
    a.global_loss += all[at + 1] / world_size();
    a.stop = a.stop || all[at + 2] != 0;
    row.push_back(all[at]);
    row.push_back(all[at + 1]);
  }
  if (rank() == 0) {
    steps_.push_back(std::move(row));
    step_numbers_.push_back(mine.step);
    global_loss_.push_back(a.global_loss);
  }
  return a;
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

std::string DataParallel::summary_section(const std::string& top_dir) const {
  std::vector<double> later(comm_ms_.begin() + (comm_ms_.empty() ? 0 : 1), comm_ms_.end());
  nlohmann::json d{
      {"world_size", world_size()},
      {"backend", std::string(dist::backend_name(group_->backend()))},
      {"launcher", std::string(dist::env_source_name(env_.source))},
      {"overlap", overlap_},
      {"bucket_mb", bucket_mb_},
      {"first_bucket_mb", first_bucket_mb_},
      {"bucket_count", bucket_bytes_.size()},
      {"bucket_bytes", bucket_bytes_},
      {"bytes_per_step", step_bytes_},
      {"rank0_comm_ms_first_step",
       comm_ms_.empty() ? nlohmann::json() : nlohmann::json(comm_ms_[0])},
      {"rank0_comm_ms_per_step_median",
       later.empty() ? nlohmann::json() : nlohmann::json(median(later))},
      {"comm_ms_note", "summed all-reduce time (launch to completion) of the step's buckets on "
                       "rank 0, first step apart (its buckets are the initial layout)"},
      {"times_note", "comm.csv times are each rank's steady clock (ns), not aligned across ranks"},
      {"rank_dirs", nlohmann::json::array()}};
  for (int r = 0; r < world_size(); ++r) d["rank_dirs"].push_back(fmt::format("rank{}", r));
  (void)top_dir;
  return d.dump();
}

void DataParallel::finish(const std::string& top_dir, const std::string& rank_dir) {
  comm_.reset();  // every row is on disk
  group_->barrier();
  if (rank() != 0) return;
  namespace fs = std::filesystem;
  // steps.csv: the global step, its slowest rank, the mean of the ranks' losses.
  std::vector<std::string> cols{"step", "step_ms", "slowest_rank", "loss"};
  for (int r = 0; r < world_size(); ++r) {
    cols.push_back(fmt::format("rank{}_ms", r));
    cols.push_back(fmt::format("rank{}_loss", r));
  }
  output::CsvWriter steps(rundir::path(top_dir, rundir::kSteps), cols, output::CsvMode::kWhole);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const std::vector<double>& row = steps_[i];
    int slowest = 0;
    for (int r = 1; r < world_size(); ++r) {
      if (row[static_cast<size_t>(r) * 2] > row[static_cast<size_t>(slowest) * 2]) slowest = r;
    }
    steps.add(step_numbers_[i]).add(row[static_cast<size_t>(slowest) * 2])
        .add(static_cast<int64_t>(slowest)).add(global_loss_[i]);
    for (double v : row) steps.add(v);
    steps.end_row();
  }
  steps.commit();
  // comm.csv: every rank's rows, rank by rank (each file's header once).
  std::string comm;
  for (int r = 0; r < world_size(); ++r) {
    const std::string text = read_text(rundir::path(fmt::format("{}/rank{}", top_dir, r),
                                                    rundir::kComm));
    const size_t eol = text.find('\n');
    if (eol == std::string::npos) continue;
    if (comm.empty()) comm = text.substr(0, eol + 1);
    comm += text.substr(eol + 1);
  }
  output::write_file_atomic(rundir::path(top_dir, rundir::kComm), comm);
  // summary.json: rank 0's summary with the distributed section.
  nlohmann::json s = nlohmann::json::parse(read_text(rundir::path(rank_dir, rundir::kSummary)),
                                           nullptr, /*allow_exceptions=*/false);
  if (s.is_discarded() || !s.is_object()) s = nlohmann::json::object();
  s["run_dir"] = top_dir;
  s["distributed"] = nlohmann::json::parse(summary_section(top_dir));
  if (!global_loss_.empty()) s["final_global_train_loss"] = global_loss_.back();
  output::write_file_atomic(rundir::path(top_dir, rundir::kSummary), s.dump(2) + "\n");
  (void)fs::exists(top_dir);
}

}  // namespace llmprof::train
