// A data-parallel process group over LibTorch's c10d: a TCPStore hosted by rank 0, a PrefixStore,
// ProcessGroupGloo on CPU (ProcessGroupNCCL in a CUDA build), a heartbeat that names a dead or
// stopped rank when a collective fails, and the small collectives the train loop needs (config
// hash check, parameter broadcast, barrier, all-reduce of eval sums, all-gather of step figures).
// LibTorch types are forward-declared: including this header costs no torch parse.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/dist/rank_env.h"
#include "llmprof/error.h"

namespace at {
class Tensor;
}
namespace torch::nn {
class Module;
}

namespace llmprof::dist {

// A distributed failure: a peer that died or hung, a busy master port, ranks that disagree.
// failed_rank() names the culprit where known (-1 otherwise). Exit 2 for set-up errors that are
// the user's to fix (busy port, config mismatch), 1 for run-time failures.
class DistError : public Error {
 public:
  DistError(const std::string& what, int failed_rank = -1, int exit_code = kExitRuntime)
      : Error(what, exit_code), failed_rank_(failed_rank) {}
  int failed_rank() const { return failed_rank_; }

 private:
  int failed_rank_;
};

// Whether this build has c10d (LLMPROF_WITH_DIST); when false every ProcessGroup::create with
// world size > 1 throws DistError("llmprof was built without c10d ...").
bool built_with_c10d();

// c10d and the backend's headers were found (gloo or nccl; config::name prints it).
bool built_with_backend(config::DdpBackend backend);

struct GroupOptions {
  // gloo or nccl: ddp.backend resolved (device::resolve_backend); auto is refused.
  config::DdpBackend backend = config::DdpBackend::kGloo;
  // ddp.timeout_s: the rendezvous, store operations, and a failed collective's detection plus
  // the heartbeat probe naming the culprit (collectives themselves get timeout_s minus
  // 2.5 heartbeat intervals and 0.75 s, at least half of timeout_s).
  double timeout_s = 60.0;
  double heartbeat_interval_s = 0.5;   // a background thread bumps this rank's store key so often
  int cuda_device = -1;                // NCCL only: the CUDA device of this rank
  // World size 1 still forms a c10d group (store, backend, reducer) instead of identities: a
  // check of a backend on one device (NCCL on a one-GPU host).
  bool c10d_for_one_rank = false;
};

// One process group for the whole run. Not copyable; destroy it before exit (stops the heartbeat,
// bounded by the timeout). Every call is collective: all ranks make it in the same order.
class ProcessGroup {
 public:
  // Rendezvous: rank 0 hosts the TCPStore on env.master_port (busy port -> DistError exit 2
  // naming it), every rank connects within options.timeout_s, then the Gloo/NCCL group forms.
  // A world size of 1 gives a group whose collectives are identities.
  static std::unique_ptr<ProcessGroup> create(const RankEnv& env, const GroupOptions& options);
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual config::DdpBackend backend() const = 0;  // gloo or nccl
  virtual double timeout_s() const = 0;

  // Every rank contributes a hash of its resolved config; a difference throws DistError (exit 2)
  // on every rank naming the ranks whose hash differs from rank 0's.
  virtual void check_same_config(const std::string& config_hash) = 0;

  // Copies rank 0's parameters and buffers into every rank's module (coalesced broadcast).
  virtual void broadcast_module(torch::nn::Module& module) = 0;
  virtual void broadcast_tensors(const std::vector<at::Tensor>& tensors) = 0;

  // Blocks until every rank arrives (bounded by the timeout).
  virtual void barrier() = 0;

  // Element-wise sums over ranks, in place (eval's loss sum, target and correct counts).
  virtual void all_reduce_sum(std::vector<double>& values) = 0;
  virtual void all_reduce_sum(std::vector<int64_t>& values) = 0;

  // Gathers every rank's `values` (same length on all ranks): result[r * n + i] = rank r's [i].
  virtual std::vector<double> all_gather(const std::vector<double>& values) = 0;

  // Point to point with one other rank, blocking, bounded by the timeout (the clock ping-pong,
  // clock_sync.h). recv fills `values`, whose size must be the message's. The default (a group
  // of one rank) throws DistError.
  virtual void send(std::vector<int64_t>& values, int dst_rank);
  virtual void recv(std::vector<int64_t>& values, int src_rank);

  // Turns a failure caught around a collective (c10d's exception, a backward that threw from
  // the reducer's wait) into a one-line DistError naming the rank that died or stopped, read from
  // the heartbeats (waits at most 2.5 heartbeat intervals + 0.5 s). `during` says what was
  // running ("gradient all-reduce", "eval all-reduce"). Every collective here already does this;
  // call it around a loss.backward() of your own on a synchronising step:
  //   try { loss.backward(); } catch (const std::exception& e) { throw g.diagnose(e, "..."); }
  virtual DistError diagnose(const std::exception& error, std::string_view during) = 0;

  // The c10d group (c10::intrusive_ptr<c10d::ProcessGroup>*), for GradSync in this concern.
  virtual void* native_handle() = 0;

 protected:
  ProcessGroup() = default;
};

}  // namespace llmprof::dist
