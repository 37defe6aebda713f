// Where this process sits in a data-parallel job: rank, world size, local rank and the rendezvous
// address, read from a torchrun-style environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
// MASTER_PORT) or from Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the job's first host).
// Torch-free: the launcher and the config layer use it without LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::dist {

// Which variables a RankEnv was read from.
enum class EnvSource {
  kNone,      // no launcher variables: world size 1, not distributed
  kTorchrun,  // RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT
  kSlurm,     // SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID / SLURM_*_NODELIST
};

// Stable output name of a source: "none", "torchrun", "slurm".
std::string_view env_source_name(EnvSource source);

inline constexpr int kDefaultMasterPort = 29500;  // torchrun's default

// This process's place in the job. world_size 1 means a plain single-process run.
struct RankEnv {
  int rank = 0;                            // global rank, 0 .. world_size-1
  int world_size = 1;                      // number of ranks in the job
  int local_rank = 0;                      // rank among the processes of this host
  std::string master_addr = "127.0.0.1";   // host of rank 0, which hosts the TCPStore
  int master_port = kDefaultMasterPort;    // the TCPStore's port
  EnvSource source = EnvSource::kNone;
  std::string port_origin = "default";     // "MASTER_PORT", "SLURM_JOB_ID" or "default"

  bool distributed() const { return world_size > 1; }
};

// Reads the environment through `get` (returns nullptr for an unset variable; tests pass a map).
// Precedence: RANK/WORLD_SIZE (torchrun) over SLURM_PROCID/SLURM_NTASKS (read only inside an
// srun step, SLURM_STEP_ID set: a batch script is one process); none = world size 1.
// A malformed or out-of-range value throws llmprof::ConfigError naming the variable and value
// (exit 2), e.g. "RANK=3 is not below WORLD_SIZE=2".
RankEnv rank_env_from(const std::function<const char*(const char*)>& get);

// rank_env_from(std::getenv).
RankEnv rank_env_from_environment();

// Expands a Slurm host list: "node[01-03,7],gpu5" -> {node01, node02, node03, node7, gpu5}.
// Zero padding of a range's lower bound is kept. Throws ConfigError on a malformed list.
std::vector<std::string> expand_nodelist(std::string_view nodelist);

// The rendezvous port of a Slurm job without MASTER_PORT: 20000 + SLURM_JOB_ID % 10000, so every
// task of one job derives the same port and concurrent jobs rarely collide.
int slurm_port_for_job(int64_t job_id);

}  // namespace llmprof::dist
