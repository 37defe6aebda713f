#include "llmprof/train/env.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <torch/torch.h>
#include <torch/version.h>

#include <ctime>
#include <fstream>

#include "llmprof/config/config.h"
#include "llmprof/device/device.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/train/setup.h"
#include "llmprof/version.h"

namespace llmprof::train {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}


int64_t total_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

std::optional<std::string> unless_empty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

rundir::EnvRuntime runtime_figures(const RuntimeInfo& runtime) {
  rundir::EnvRuntime r;
  r.malloc_tuning = runtime.malloc_tuned;
  r.malloc_mmap_threshold_applied = runtime.malloc_mmap_threshold_applied;
  if (runtime.malloc_tuned) {
    r.malloc_mmap_threshold_bytes = runtime.malloc_mmap_threshold_bytes;
    r.malloc_trim_threshold_bytes = runtime.malloc_trim_threshold_bytes;
  }
  if (!runtime.omp_wait_policy.empty()) r.omp_wait_policy = runtime.omp_wait_policy;
  if (!runtime.omp_num_threads.empty()) r.omp_num_threads = runtime.omp_num_threads;
  return r;
}

rundir::EnvHost host_figures(const RuntimeInfo& runtime) {
  utsname u{};
  uname(&u);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return rundir::EnvHost{std::string(host),
                         std::string(u.sysname) + " " + u.release,
                         std::string(u.machine),
                         cpu_model(),
                         runtime.cores,
                         device::cpu_has_flag("avx512_bf16"),
                         device::cpu_has_flag("amx_bf16"),
                         total_memory_bytes()};
}

template <typename T>
std::optional<T> if_positive(T v) {
  return v > 0 ? std::optional<T>(v) : std::nullopt;
}

}  // namespace

rundir::Env collect_env(const config::Config& cfg,
                        const RuntimeInfo& runtime,
                        const device::PeakFlops& peak,
                        const device::PeakBytes& bandwidth,
                        const TrainOptions& opts) {
  rundir::Env env;
  env.start_time = output::local_time_now("%Y-%m-%dT%H:%M:%S%z");
  env.command_line = opts.command_line;
  env.llmprof = rundir::EnvBuild{kVersion, kGitSha, kBuildType};
  env.host = host_figures(runtime);
  env.torch = rundir::EnvTorch{std::string(TORCH_VERSION), torch::cuda::is_available(),
                               at::get_parallel_info()};
  env.device = cfg.device.kind;
  env.threads = runtime.threads;
  env.threads_configured = cfg.threads;
  env.blas = rundir::EnvBlas{unless_empty(runtime.blas_config), runtime.blas_parallel,
                             runtime.blas_libraries};
  env.runtime = runtime_figures(runtime);
  // CUDA: the caching allocator's settings; none on the CPU.
  env.runtime->cuda_allocator_settings = unless_empty(device::cuda_allocator_settings(cfg));
  env.peak_flops = rundir::EnvPeakFlops{peak.flops_per_s, peak.source, peak.method,
                                        if_positive(peak.bf16_flops_per_s)};
  env.peak_bandwidth = rundir::EnvPeakBandwidth{if_positive(bandwidth.bytes_per_s),
                                                if_positive(bandwidth.copy_bytes_per_s),
                                                bandwidth.source, bandwidth.method};
  const double busbw = cfg.profile.peak_busbw_bytes_per_s;
  env.peak_comm = rundir::EnvPeakComm{
      if_positive(busbw), busbw > 0 ? "profile.peak_busbw_bytes_per_s"
                                 : "not given: measure it with `llmprof peak --comm` and set "
                                   "profile.peak_busbw_bytes_per_s"};
  return env;
}

}  // namespace llmprof::train
