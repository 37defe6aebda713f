#include "llmprof/train/runtime.h"

#include <spdlog/spdlog.h>

#include <dlfcn.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "llmprof/config/config.h"

namespace llmprof::train {

namespace {

// OpenBLAS entry points, looked up at run time: the library comes in through libtorch.
using SetThreadsFn = void (*)(int);
using GetConfigFn = char* (*)();
using GetParallelFn = int (*)();

template <typename Fn>
Fn find_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

std::vector<std::string> mapped_blas_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    std::string file = path.substr(path.rfind('/') + 1);
    for (const char* key : {"blas", "lapack", "mkl", "gomp", "libomp", "iomp"}) {
      if (file.find(key) != std::string::npos) found.insert(path);
    }
  }
  return {found.begin(), found.end()};
}

RuntimeInfo apply_runtime(const config::Config& cfg) {
  RuntimeInfo info;
  info.omp_wait_policy = env_or_empty("OMP_WAIT_POLICY");
  info.omp_num_threads = env_or_empty("OMP_NUM_THREADS");
  info.cores = std::max<int64_t>(1, std::thread::hardware_concurrency());

  if (cfg.runtime.malloc_tuning) {
    // Keep activation-sized buffers on the heap instead of fresh mmaps, and stop glibc returning
    // freed memory to the OS every step: ~2,000 page faults per step otherwise.
    // mallopt returns 0 for a threshold glibc refuses (above its heap's maximum size); its dynamic
    // threshold then stays in effect, which env.json and the log say.
    info.malloc_mmap_threshold_applied =
        mallopt(M_MMAP_THRESHOLD, static_cast<int>(cfg.runtime.malloc_mmap_threshold_bytes)) == 1;
    if (!info.malloc_mmap_threshold_applied) {
      spdlog::warn("runtime.malloc_mmap_threshold_bytes: glibc rejected {} (mallopt returned 0; "
                   "too large for its heap); glibc's dynamic mmap threshold stays in effect",
                   cfg.runtime.malloc_mmap_threshold_bytes);
    }
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(cfg.runtime.malloc_trim_threshold_bytes));
    info.malloc_tuned = true;
    info.malloc_mmap_threshold_bytes = cfg.runtime.malloc_mmap_threshold_bytes;
    info.malloc_trim_threshold_bytes = cfg.runtime.malloc_trim_threshold_bytes;
  }

  const int64_t threads = cfg.threads > 0 ? cfg.threads : info.cores;
  at::set_num_threads(static_cast<int>(threads));
  if (auto set_blas = find_symbol<SetThreadsFn>("openblas_set_num_threads")) {
    set_blas(static_cast<int>(threads));
  }
  info.threads = at::get_num_threads();

  if (auto get_config = find_symbol<GetConfigFn>("openblas_get_config")) {
    const char* c = get_config();
    info.blas_config = c == nullptr ? "" : c;
  }
  info.blas_parallel = "unknown";
  if (auto get_parallel = find_symbol<GetParallelFn>("openblas_get_parallel")) {
    switch (get_parallel()) {
      case 0: info.blas_parallel = "sequential"; break;
      case 1: info.blas_parallel = "pthread"; break;
      case 2: info.blas_parallel = "openmp"; break;
      default: break;
    }
  }
  info.blas_libraries = mapped_blas_libraries();
  return info;
}

}  // namespace llmprof::train
