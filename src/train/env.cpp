#include "llmprof/train/env.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <torch/torch.h>
#include <torch/version.h>

#include <ctime>
#include <fstream>

#include "llmprof/config/config.h"
#include "llmprof/output/run_dir.h"
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

}  // namespace

nlohmann::json collect_env(const config::Config& cfg,
                           const RuntimeInfo& runtime,
                           const PeakFlops& peak,
                           const PeakBytes& bandwidth,
                           const TrainOptions& opts) {
  using nlohmann::json;
  utsname u{};
  uname(&u);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  json env;
  env["schema_version"] = kEnvSchemaVersion;
  env["start_time"] = output::local_time_now("%Y-%m-%dT%H:%M:%S%z");
  env["command_line"] = opts.command_line;
  env["llmprof"] = {{"version", kVersion}, {"git_sha", kGitSha}, {"build_type", kBuildType}};
  env["host"] = {{"hostname", host},
                 {"kernel", std::string(u.sysname) + " " + u.release},
                 {"arch", u.machine},
                 {"cpu_model", cpu_model()},
                 {"cores", runtime.cores},
                 {"avx512_bf16", cpu_has_flag("avx512_bf16")},
                 {"amx_bf16", cpu_has_flag("amx_bf16")},
                 {"memory_bytes", total_memory_bytes()}};
  env["torch"] = {{"version", TORCH_VERSION},
                  {"cuda_available", torch::cuda::is_available()},
                  {"parallel_info", at::get_parallel_info()}};
  env["device"] = config::name(cfg.device.kind);
  env["threads"] = runtime.threads;
  env["threads_configured"] = cfg.threads;
  env["blas"] = {{"openblas_config", runtime.blas_config.empty() ? json(nullptr)
                                                                : json(runtime.blas_config)},
                 {"parallel", runtime.blas_parallel},
                 {"mapped_libraries", runtime.blas_libraries}};
  env["runtime"] = {
      {"malloc_tuning", runtime.malloc_tuned},
      {"malloc_mmap_threshold_applied", runtime.malloc_mmap_threshold_applied},
      {"malloc_mmap_threshold_bytes", runtime.malloc_tuned ? json(runtime.malloc_mmap_threshold_bytes)
                                                           : json(nullptr)},
      {"malloc_trim_threshold_bytes", runtime.malloc_tuned ? json(runtime.malloc_trim_threshold_bytes)
                                                           : json(nullptr)},
      {"OMP_WAIT_POLICY", runtime.omp_wait_policy.empty() ? json(nullptr) : json(runtime.omp_wait_policy)},
      {"OMP_NUM_THREADS", runtime.omp_num_threads.empty() ? json(nullptr) : json(runtime.omp_num_threads)}};
  env["peak_flops"] = {{"flops_per_s", peak.flops_per_s},
                       {"source", peak.source},
                       {"method", peak.method},
                       {"bf16_flops_per_s",
                        peak.bf16_flops_per_s > 0 ? json(peak.bf16_flops_per_s) : json(nullptr)}};
  env["peak_bandwidth"] = {
      {"bytes_per_s", bandwidth.bytes_per_s > 0 ? json(bandwidth.bytes_per_s) : json(nullptr)},
      {"copy_bytes_per_s",
       bandwidth.copy_bytes_per_s > 0 ? json(bandwidth.copy_bytes_per_s) : json(nullptr)},
      {"source", bandwidth.source},
      {"method", bandwidth.method}};
  const double busbw = cfg.profile.peak_busbw_bytes_per_s;
  env["peak_comm"] = {
      {"busbw_bytes_per_s", busbw > 0 ? json(busbw) : json(nullptr)},
      {"source", busbw > 0 ? "profile.peak_busbw_bytes_per_s"
                           : "not given: measure it with `llmprof peak --comm` and set "
                             "profile.peak_busbw_bytes_per_s"}};
  return env;
}

}  // namespace llmprof::train
