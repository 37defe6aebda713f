// `llmprof peak --comm`: the all-reduce bus bandwidth roof (dist/comm_bench.h) on the ranks this
// command runs as (--nproc N local ranks, or the tasks of srun / a torchrun-style launcher).
#pragma once

#include <cstdint>
#include <string>

namespace llmprof::cli {

struct PeakCommArgs {
  int64_t nproc = 0;                    // > 1: launch that many local ranks of this command
  std::string min_bytes = "4K";         // nccl-tests' -b, with K/M/G suffixes (binary)
  std::string max_bytes = "256M";       // -e
  int64_t factor = 2;                   // -f
  int64_t warmup_iters = 5;             // -w
  int64_t iters = 20;                   // -n
  double timeout_s = 120;               // the process group's rendezvous and collective timeout
  std::string output_dir;               // writes comm_peak.csv there (rank 0)
  std::string device = "cpu";           // cpu: Gloo; cuda: NCCL on the rank's local device
};

// "4096", "4K", "256M", "1G" (K = 1024) as bytes; throws UsageError naming the option and value.
int64_t parse_bytes(const std::string& option, const std::string& value);

// Runs the benchmark (or launches its ranks) and prints rank 0's table; returns the exit code.
int run_peak_comm(const PeakCommArgs& args);

}  // namespace llmprof::cli
