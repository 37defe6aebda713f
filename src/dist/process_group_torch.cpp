// The process group over c10d (include/llmprof/dist/process_group.h): rendezvous through a
// TCPStore hosted by rank 0, Gloo (CPU) or NCCL (CUDA), heartbeats, and the small collectives.
#include "llmprof/dist/process_group.h"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>
#include <torch/torch.h>

#include "c10d_compat.h"
#include "heartbeat.h"

namespace llmprof::dist {

bool built_with_c10d() {
#if LLMPROF_WITH_DIST
  return true;
#else
  return false;
#endif
}

bool built_with_backend(config::DdpBackend backend) {
#if LLMPROF_DIST_NCCL
  if (backend == config::DdpBackend::kNccl) return true;
#endif
#if LLMPROF_DIST_GLOO
  if (backend == config::DdpBackend::kGloo) return true;
#endif
  (void)backend;
  return false;
}

namespace {

std::string first_line(std::string s) {
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

// World size 1: every collective is the identity.
class SoloGroup final : public ProcessGroup {
 public:
  explicit SoloGroup(const GroupOptions& options) : options_(options) {}
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  config::DdpBackend backend() const override { return options_.backend; }
  double timeout_s() const override { return options_.timeout_s; }
  void check_same_config(const std::string&) override {}
  void broadcast_module(torch::nn::Module&) override {}
  void broadcast_tensors(const std::vector<at::Tensor>&) override {}
  void barrier() override {}
  void all_reduce_sum(std::vector<double>&) override {}
  void all_reduce_sum(std::vector<int64_t>&) override {}
  std::vector<double> all_gather(const std::vector<double>& values) override { return values; }
  DistError diagnose(const std::exception& error, std::string_view during) override {
    return DistError(fmt::format("{} failed: {}", during, first_line(error.what())));
  }
  void* native_handle() override { return nullptr; }

 private:
  GroupOptions options_;
};

#if LLMPROF_WITH_DIST

using compat::PgPtr;
using compat::StorePtr;

std::chrono::milliseconds ms_of(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(s * 1000)));
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// Gloo binds to the address `host` resolves to: loopback for a one-host job, else this host.
std::string gloo_host(const RankEnv& env) {
  if (is_loopback(env.master_addr)) return "127.0.0.1";
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "127.0.0.1";
  return name;
}

class C10dGroup final : public ProcessGroup {
 public:
  C10dGroup(const RankEnv& env, const GroupOptions& options) : env_(env), options_(options) {
    // A failure's detection and its naming both fit in timeout_s: the collectives get what is
    // left after the heartbeat probe (2.5 intervals and a connection) and a 0.25 s margin, at
    // least half of it.
    probe_s_ = 2.5 * options.heartbeat_interval_s + 0.5;
    collective_s_ = std::max(options.timeout_s - probe_s_ - 0.25, options.timeout_s / 2);
    store_ = rendezvous();
    try {
      heartbeat_ = std::make_unique<Heartbeat>(env.master_addr, env.master_port, env.rank,
                                               env.world_size, options.heartbeat_interval_s);
      auto pg_store = c10::make_intrusive<c10d::PrefixStore>("llmprof/pg", store_);
      pg_ = make_backend(pg_store);
    } catch (const DistError&) {
      throw;
    } catch (const std::exception& e) {
      throw diagnose(e, fmt::format("{} group set-up", config::name(options.backend)));
    }
  }

  int rank() const override { return env_.rank; }
  int world_size() const override { return env_.world_size; }
  config::DdpBackend backend() const override { return options_.backend; }
  double timeout_s() const override { return options_.timeout_s; }
  void* native_handle() override { return &pg_; }

  void check_same_config(const std::string& config_hash) override;
  void broadcast_module(torch::nn::Module& module) override;
  void broadcast_tensors(const std::vector<at::Tensor>& tensors) override;
  void barrier() override;
  void all_reduce_sum(std::vector<double>& values) override;
  void all_reduce_sum(std::vector<int64_t>& values) override;
  std::vector<double> all_gather(const std::vector<double>& values) override;
  void send(std::vector<int64_t>& values, int dst_rank) override;
  void recv(std::vector<int64_t>& values, int src_rank) override;
  DistError diagnose(const std::exception& error, std::string_view during) override;

 private:
  StorePtr rendezvous();
  PgPtr make_backend(const StorePtr& store);
  at::Tensor on_device(const at::Tensor& t) const;
  template <typename F>
  auto guarded(std::string_view during, F&& f) {
    try {
      return f();
    } catch (const DistError&) {
      throw;
    } catch (const std::exception& e) {
      throw diagnose(e, during);
    }
  }

  RankEnv env_;
  GroupOptions options_;
  double probe_s_ = 0;
  double collective_s_ = 0;
  StorePtr store_;
  PgPtr pg_;
  std::unique_ptr<Heartbeat> heartbeat_;
  int64_t config_checks_ = 0;
};

StorePtr C10dGroup::rendezvous() {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<uint16_t>(env_.master_port);
  opts.isServer = env_.rank == 0;
  opts.numWorkers = static_cast<size_t>(env_.world_size);
  opts.waitWorkers = true;
  opts.timeout = ms_of(options_.timeout_s);
  const std::string where = fmt::format("{}:{}", env_.master_addr, env_.master_port);
  try {
    return c10::make_intrusive<c10d::TCPStore>(env_.master_addr, opts);
  } catch (const std::exception& e) {
    std::string what = first_line(compat::what_of(e));
    if (env_.rank == 0 && (what.find("ddress already in use") != std::string::npos ||
                           what.find("EADDRINUSE") != std::string::npos)) {
      throw DistError(fmt::format("rank 0 cannot host the rendezvous store: port {} is in use "
                                  "(set MASTER_PORT to a free port)", env_.master_port),
                      0, kExitUsage);
    }
    throw DistError(fmt::format("rank {}: rendezvous at {} ({} ranks, timeout {} s) failed: {}",
                                env_.rank, where, env_.world_size, options_.timeout_s, what),
                    env_.rank == 0 ? -1 : 0);
  }
}

PgPtr C10dGroup::make_backend(const StorePtr& store) {
  const auto timeout = ms_of(collective_s_);
  if (options_.backend == config::DdpBackend::kNccl) {
#if LLMPROF_DIST_NCCL
    return compat::make_nccl(store, env_.rank, env_.world_size, options_.cuda_device, timeout);
#else
    throw DistError("ddp backend nccl: this build has no ProcessGroupNCCL (CUDA LibTorch needed)",
                    -1, kExitUsage);
#endif
  }
#if LLMPROF_DIST_GLOO
  // One worker thread: the ranks share few cores with compute, and DDP launches buckets in order.
  return compat::make_gloo(store, env_.rank, env_.world_size, gloo_host(env_), timeout, 1);
#else
  throw DistError("ddp backend gloo: built without gloo's headers (install libgloo-dev)", -1,
                  kExitUsage);
#endif
}

at::Tensor C10dGroup::on_device(const at::Tensor& t) const {
  if (options_.backend != config::DdpBackend::kNccl) return t;
  return t.to(torch::Device(torch::kCUDA, std::max(options_.cuda_device, 0)));
}

DistError C10dGroup::diagnose(const std::exception& error, std::string_view during) {
  const std::string cause = first_line(compat::what_of(error));
  Liveness live = heartbeat_ ? heartbeat_->probe(probe_s_) : Liveness{};
  switch (live.kind) {
    case Liveness::Kind::kStale: {
      std::string who;
      for (size_t i = 0; i < live.stale_ranks.size(); ++i) {
        double age = live.last_seen_s[i];
        who += fmt::format("{}rank {} ({})", i ? ", " : "", live.stale_ranks[i],
                           age < 0 ? std::string("never seen")
                                   : fmt::format("last heartbeat {:.1f} s ago", age));
      }
      return DistError(fmt::format("{} failed on rank {}: {} stopped answering (dead or hung) "
                                   "[{}]", during, env_.rank, who, cause),
                       live.stale_ranks.front());
    }
    case Liveness::Kind::kStoreGone:
      return DistError(fmt::format("{} failed on rank {}: rank 0 (the store host) is gone ({}) "
                                   "[{}]", during, env_.rank, first_line(live.detail), cause), 0);
    case Liveness::Kind::kStoreSilent:
      return DistError(fmt::format("{} failed on rank {}: rank 0 (the store host) does not answer "
                                   "within {:.1f} s (stopped or unreachable) [{}]",
                                   during, env_.rank, probe_s_, cause), 0);
    case Liveness::Kind::kAllLive:
      break;
  }
  return DistError(fmt::format("{} failed on rank {}: {} (every rank's heartbeat is live)", during,
                               env_.rank, cause));
}

void C10dGroup::check_same_config(const std::string& config_hash) {
  const std::string prefix = fmt::format("llmprof/cfg/{}/", config_checks_++);
  std::vector<std::string> hashes = guarded("config hash exchange", [&] {
    store_->set(prefix + std::to_string(env_.rank),
                std::vector<uint8_t>(config_hash.begin(), config_hash.end()));
    std::vector<std::string> all;
    for (int r = 0; r < env_.world_size; ++r) {
      auto bytes = store_->get(prefix + std::to_string(r));  // waits, bounded by the timeout
      all.emplace_back(bytes.begin(), bytes.end());
    }
    return all;
  });
  std::vector<int> differ;
  for (int r = 1; r < env_.world_size; ++r) {
    if (hashes[r] != hashes[0]) differ.push_back(r);
  }
  if (differ.empty()) return;
  std::string list;
  for (int r : differ) list += fmt::format("{}rank {} ({})", list.empty() ? "" : ", ", r, hashes[r]);
  throw DistError(fmt::format("the config differs between ranks: {} against rank 0 ({}); every "
                              "rank must run the same config", list, hashes[0]),
                  differ.front(), kExitUsage);
}

void C10dGroup::broadcast_tensors(const std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  guarded("parameter broadcast from rank 0", [&] {
    torch::NoGradGuard no_grad;
    c10d::broadcast_coalesced(pg_, tensors, size_t{256} << 20, 0);
  });
}

void C10dGroup::broadcast_module(torch::nn::Module& module) {
  std::vector<at::Tensor> tensors;
  for (auto& p : module.parameters()) tensors.push_back(p);
  for (auto& b : module.buffers()) tensors.push_back(b);
  broadcast_tensors(tensors);
}

void C10dGroup::barrier() {
  guarded("barrier", [&] { pg_->barrier()->wait(); });
}

void C10dGroup::all_reduce_sum(std::vector<double>& values) {
  if (values.empty()) return;
  guarded("all-reduce", [&] {
    auto host = torch::from_blob(values.data(), {static_cast<int64_t>(values.size())},
                                 torch::kDouble);
    std::vector<at::Tensor> t{on_device(host)};
    pg_->allreduce(t)->wait();
    if (!t[0].is_same(host)) host.copy_(t[0].cpu());
  });
}

void C10dGroup::all_reduce_sum(std::vector<int64_t>& values) {
  if (values.empty()) return;
  guarded("all-reduce", [&] {
    auto host = torch::from_blob(values.data(), {static_cast<int64_t>(values.size())},
                                 torch::kLong);
    std::vector<at::Tensor> t{on_device(host)};
    pg_->allreduce(t)->wait();
    if (!t[0].is_same(host)) host.copy_(t[0].cpu());
  });
}

std::vector<double> C10dGroup::all_gather(const std::vector<double>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return guarded("all-gather", [&] {
    auto in = on_device(torch::tensor(values, torch::kDouble).reshape({n}));
    std::vector<at::Tensor> inputs{in};
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < env_.world_size; ++r) outputs[0].push_back(torch::empty_like(in));
    pg_->allgather(outputs, inputs)->wait();
    std::vector<double> all;
    all.reserve(n * env_.world_size);
    for (auto& t : outputs[0]) {
      auto c = t.cpu().contiguous();
      all.insert(all.end(), c.data_ptr<double>(), c.data_ptr<double>() + n);
    }
    return all;
  });
}

// Tag 0 is c10d's default; point-to-point pairs are matched by order on each pair of ranks.
void C10dGroup::send(std::vector<int64_t>& values, int dst_rank) {
  guarded(fmt::format("send to rank {}", dst_rank), [&] {
    auto host = torch::from_blob(values.data(), {static_cast<int64_t>(values.size())},
                                 torch::kLong);
    std::vector<at::Tensor> t{on_device(host)};
    pg_->send(t, dst_rank, /*tag=*/0)->wait(ms_of(collective_s_));
  });
}

void C10dGroup::recv(std::vector<int64_t>& values, int src_rank) {
  guarded(fmt::format("receive from rank {}", src_rank), [&] {
    auto host = torch::from_blob(values.data(), {static_cast<int64_t>(values.size())},
                                 torch::kLong);
    std::vector<at::Tensor> t{on_device(host)};
    pg_->recv(t, src_rank, /*tag=*/0)->wait(ms_of(collective_s_));
    if (!t[0].is_same(host)) host.copy_(t[0].cpu());
  });
}

#endif  // LLMPROF_WITH_DIST

}  // namespace

void ProcessGroup::send(std::vector<int64_t>&, int dst_rank) {
  throw DistError(fmt::format("send to rank {}: this group has no point-to-point (world size {})",
                              dst_rank, world_size()));
}

void ProcessGroup::recv(std::vector<int64_t>&, int src_rank) {
  throw DistError(fmt::format("receive from rank {}: this group has no point-to-point (world "
                              "size {})", src_rank, world_size()));
}

std::unique_ptr<ProcessGroup> ProcessGroup::create(const RankEnv& env,
                                                   const GroupOptions& options) {
  if (!(options.timeout_s > 0) || !std::isfinite(options.timeout_s)) {
    throw ConfigError(fmt::format("ddp.timeout_s = {}: expected a positive number of seconds",
                                  options.timeout_s), {}, "ddp.timeout_s");
  }
  if (!(options.heartbeat_interval_s > 0) || options.heartbeat_interval_s > options.timeout_s) {
    throw ConfigError(fmt::format("heartbeat interval {} s: expected in (0, ddp.timeout_s]",
                                  options.heartbeat_interval_s));
  }
  if (options.backend == config::DdpBackend::kAuto) {
    throw Error("ddp.backend auto reached the process group unresolved (device::resolve_backend)");
  }
  if (env.world_size <= 1 && !options.c10d_for_one_rank) {
    return std::make_unique<SoloGroup>(options);
  }
#if LLMPROF_WITH_DIST
  return std::make_unique<C10dGroup>(env, options);
#else
  throw DistError(fmt::format("world size {} needs data-parallel support, but llmprof was built "
                              "without c10d (LLMPROF_WITH_DIST=OFF or LibTorch's c10d headers "
                              "missing)", env.world_size), -1, kExitUsage);
#endif
}

}  // namespace llmprof::dist
