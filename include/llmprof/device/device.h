// The configured device, decided in one place: checked against this build and host, what it
// computes, the data-parallel backend and a rank's CUDA ordinal. Past config's validation only the
// device concern branches on config::Device; everyone else asks it (torch-free).
#pragma once

#include <optional>
#include <string>

#include "llmprof/config/enums.h"

namespace llmprof::config {
struct Config;
}

namespace llmprof::device {

// Throws ConfigError (key device or device_index) unless cfg.device is cpu or a CUDA device this
// build and host have; the message says why not (CPU-only LibTorch, no driver or device).
void check_device(const config::Config& cfg);

// The CUDA caching allocator's settings a run of cfg gets: PYTORCH_CUDA_ALLOC_CONF (else
// PYTORCH_ALLOC_CONF) as found, with expandable_segments:True added by
// train.cuda_expandable_segments; "" when neither, and on the CPU (no caching allocator).
std::string cuda_allocator_settings(const config::Config& cfg);

// train.cuda_expandable_segments on a CUDA device: hands cuda_allocator_settings(cfg) to the
// caching allocator (LibTorch >= 2.1; process-wide, so a later run in the same process keeps
// it). Throws ConfigError naming the key on an older LibTorch or settings it refuses. Nothing
// otherwise. DeviceContext::make calls it; a run calls it before anything allocates on the
// device (torch: llmprof_device_torch).
void configure_cuda_allocator(const config::Config& cfg);

// The CUDA runtime's name of cuda:index ("NVIDIA H100 80GB HBM3"); empty in a build without CUDA.
std::string cuda_device_name(int index);

// What a device computes and how it is measured; each caller branches on what it needs, never on
// the kind of device.
struct Capabilities {
  bool fp16 = false;                // fp16 matmuls and autocast (CUDA; CPU matmuls have none)
  bool int8_dynamic_quant = false;  // int8 dynamic quantization of Linears (the CPU's engines)
  bool caching_allocator = false;   // CUDA's caching allocator: its counters and block rounding
  bool timing_events = false;  // device events time its work (else the host clock: synchronous)
  bool fused_kernels = false;  // llmprof's own CUDA kernels (model.fused_*) run on its tensors
};

// The capabilities of a kind of device, whatever this build has (check_device says that).
Capabilities capabilities(const config::Device& device);

// ddp.backend resolved, the one place `auto` is: gloo or nccl as configured; auto = nccl on a
// CUDA device, gloo on the CPU. Never kAuto.
config::DdpBackend resolve_backend(const config::Config& cfg);

// The CUDA ordinal of this process: -1 on the CPU; on a CUDA device local_rank when given (one
// GPU per rank of a launched group), else the configured index.
int cuda_ordinal(const config::Device& device, std::optional<int> local_rank = std::nullopt);

}  // namespace llmprof::device
