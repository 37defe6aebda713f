// env.json as one typed document: the context block of a run (google/benchmark's
// json_reporter): host, build, LibTorch, BLAS, runtime choices, the peaks MFU and the roofline
// divide by, the energy sources. train collects the figures, rundir writes and reads them.
// Schema kEnvSchemaVersion (rundir/files.h); fields in docs/env.md. Nullopt is JSON null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config/enums.h"
#include "llmprof/telemetry/energy_figures.h"

namespace llmprof::rundir {

struct EnvBuild {  // "llmprof"
  std::string version, git_sha, build_type;
};

struct EnvHost {
  std::optional<std::string> hostname, kernel, arch, cpu_model;
  std::optional<int64_t> cores;  // hardware threads visible to the process
  std::optional<bool> avx512_bf16;
  std::optional<bool> amx_bf16;  // later field
  std::optional<int64_t> memory_bytes;
};

struct EnvTorch {
  std::optional<std::string> version;
  std::optional<bool> cuda_available;
  std::optional<std::string> parallel_info;  // at::get_parallel_info()
};

struct EnvBlas {
  std::optional<std::string> openblas_config;  // null: not OpenBLAS
  std::string parallel;                        // openmp | pthread | sequential | unknown
  std::vector<std::string> mapped_libraries;
};

struct EnvRuntime {
  std::optional<bool> malloc_tuning;
  std::optional<bool> malloc_mmap_threshold_applied;  // later field
  // Null when malloc is not tuned.
  std::optional<int64_t> malloc_mmap_threshold_bytes, malloc_trim_threshold_bytes;
  // As found in the environment; null when unset.
  std::optional<std::string> omp_wait_policy, omp_num_threads;
  // A CUDA run's caching-allocator settings: PYTORCH_CUDA_ALLOC_CONF as found, with
  // expandable_segments:True added by train.cuda_expandable_segments; written only when set.
  std::optional<std::string> cuda_allocator_settings;
};

struct EnvPeakFlops {
  std::optional<double> flops_per_s;
  std::string source, method;  // configured | measured; how
  std::optional<double> bf16_flops_per_s;  // later field; null unless measured beside fp32
};

struct EnvPeakBandwidth {  // later section
  std::optional<double> bytes_per_s, copy_bytes_per_s;
  std::string source, method;
};

struct EnvPeakComm {  // later section
  std::optional<double> busbw_bytes_per_s;
  std::string source;
};

struct Env {
  int schema_version = 0;  // as read; the writer writes kEnvSchemaVersion
  std::optional<std::string> start_time;
  std::vector<std::string> command_line;
  std::optional<EnvBuild> llmprof;
  std::optional<EnvHost> host;
  std::optional<EnvTorch> torch;
  std::optional<config::DeviceKind> device;
  std::optional<int64_t> threads, threads_configured;
  std::optional<EnvBlas> blas;
  std::optional<EnvRuntime> runtime;
  std::optional<EnvPeakFlops> peak_flops;  // absent from bench.json's context
  std::optional<EnvPeakBandwidth> peak_bandwidth;
  std::optional<EnvPeakComm> peak_comm;
  std::optional<telemetry::EnergyAvailability> energy;  // absent from bench.json's context

  // Read back, not written: later fields the file predates (a note each) and fields this
  // version does not know (JSON pointer -> JSON text, written back by a rewrite).
  std::vector<std::string> read_notes;
  std::map<std::string, std::string> unknown;
};

// The document's text: keys in a fixed (sorted) order, two-space indent, a final newline.
std::string env_text(const Env& e);
// Writes path (temp + rename).
void write_env(const std::string& path, const Env& e);
// Parses an env.json text; errors name `file`: invalid JSON, a field of the wrong type, no
// schema_version (the one field every env.json has), a newer schema_version, an unknown device.
Env parse_env(const std::string& text, const std::string& file);
// Reads and parses path (a missing file is a DataError naming it).
Env read_env(const std::string& path);
// docs/env.md: every field, its type and when it is written, from the writer.
std::string env_fields_doc();

}  // namespace llmprof::rundir
