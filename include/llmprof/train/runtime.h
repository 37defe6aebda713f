// Process-wide runtime set-up applied before training: intra-op threads (LibTorch starts with one
// here), the OpenBLAS thread count, and glibc malloc tuning. Measured on the 2-core CI machine:
// Debian's pthread OpenBLAS + default malloc ~160 ms/step; the OpenMP OpenBLAS (loaded through our
// binaries' RPATH) + these mallopt thresholds ~43 ms/step. See docs/guide/training.md "Runtime
// set-up".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmprof::config {
struct Config;
}

namespace llmprof::train {

struct RuntimeInfo {
  int64_t threads = 0;               // intra-op threads set (at::get_num_threads after set-up)
  int64_t cores = 0;                 // hardware threads visible to the process
  bool malloc_tuned = false;
  int64_t malloc_mmap_threshold_bytes = 0;
  bool malloc_mmap_threshold_applied = false;  // false: glibc's mallopt refused the value
  int64_t malloc_trim_threshold_bytes = 0;
  std::string blas_config;           // openblas_get_config(), or "" when not OpenBLAS
  std::string blas_parallel;         // "openmp" | "pthread" | "sequential" | "unknown"
  std::vector<std::string> blas_libraries;  // BLAS/LAPACK files really mapped (/proc/self/maps)
  std::string omp_wait_policy;       // OMP_WAIT_POLICY as found in the environment, "" if unset
  std::string omp_num_threads;       // OMP_NUM_THREADS likewise
};

// Applies threads and malloc settings from cfg (threads 0 = all cores). Call once, before the
// first tensor op. Returns what is really in force.
RuntimeInfo apply_runtime(const config::Config& cfg);

// Paths of mapped shared objects whose file name matches blas/lapack/mkl/openblas/gomp.
std::vector<std::string> mapped_blas_libraries();

}  // namespace llmprof::train
