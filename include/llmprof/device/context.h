// Where a run computes. On the CPU nothing moves. On a CUDA device (a CUDA build,
// LLMPROF_WITH_CUDA) the model, optimizer state, eval batches and each training batch live on the
// device: the loader's slots are pinned (page-locked) so a batch is copied with non_blocking while
// the host goes on, and each slot is fenced by a CUDA event so a worker never refills it while its
// copy is still in flight. llmprof train, eval and bench run on it (torch).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>

#include "llmprof/config/config.h"
#include "llmprof/data/loader.h"
#include "llmprof/device/memory.h"
#include "llmprof/device/peak.h"

namespace llmprof::gpu {
class ActivitySource;
class EventApi;
}  // namespace llmprof::gpu

namespace llmprof::device {

// The autocast of a run's precision on its device: bf16 (CPU, CUDA) or fp16 (CUDA); off at fp32.
struct Autocast {
  explicit Autocast(const config::Config& cfg)
      : Autocast(cfg.device, cfg.train.precision) {}
  Autocast(const config::Device& device, config::Precision precision);
  torch::DeviceType device_type;
  torch::ScalarType dtype;
  bool on;
};

// The torch device of a config device: kCPU, or kCUDA with its ordinal.
torch::Device torch_device(const config::Device& device);

class DeviceContext {
 public:
  // The context of cfg.device: the CPU, or cuda:cfg.device.index made the current device.
  // Throws ConfigError (key device) when cuda is not available in this build or on this host.
  static std::unique_ptr<DeviceContext> make(const config::Config& cfg);
  virtual ~DeviceContext() = default;

  virtual torch::Device device() const = 0;
  bool is_cuda() const { return device().is_cuda(); }
  // "cpu", or "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, 79.1 GiB)".
  virtual std::string describe() const = 0;

  // The loader's slot buffers: pinned and fenced on CUDA; null = pageable host memory.
  virtual data::SlotMemory* slot_memory() { return nullptr; }
  // A tensor wrapping loader memory, on the device: an asynchronous copy from the pinned slot
  // (the slot's fence is recorded when the loader releases it). The tensor itself on the CPU, and
  // an undefined one as it is.
  virtual torch::Tensor to_device(const torch::Tensor& t) { return t; }
  // A tensor owned by the caller (eval sets), copied to the device once.
  torch::Tensor copy_to_device(const torch::Tensor& t) const;

  // The peak FLOP/s MFU divides by at precision. CUDA: the device's dense datasheet figure (one
  // the table lacks: its measured matmul, peak_sizes). CPU: its measured matmul (bf16 or fp32;
  // fp32 on a CPU with native bf16 measures the bf16 peak beside it).
  virtual PeakFlops peak_flops(config::Precision precision) const = 0;
  // The memory roof measured on this device's memory: STREAM triad, best of
  // peak_sizes().run_bandwidth_reps (the CPU's arrays then leave the peak RSS where
  // /proc/self/clear_refs allows it).
  virtual PeakBytes peak_bytes() const = 0;
  // Where the GPU activity of recorded windows comes from: CUPTI on a CUDA device whose build and
  // host have it (else null, and the log says why); null on the CPU.
  virtual std::unique_ptr<gpu::ActivitySource> activity_source() const;
  // The events that time work on the device (its default stream): CUDA's; null on the CPU,
  // whose work is timed by the host clock.
  virtual std::unique_ptr<gpu::EventApi> event_api() const;

  // Waits for the device's queued work (the end of timed regions in bench, never in a step).
  virtual void synchronize() {}
  // The caching allocator's counters (device/memory.h); null on the CPU.
  virtual std::optional<DeviceMemory> memory() const { return std::nullopt; }
  // Starts a new peak window of the caching allocator (a host call, no sync).
  virtual void reset_peak_memory() {}
};

// Moves a module's parameters and buffers to the context's device (a no-op on the CPU).
void move_module(torch::nn::Module& module, const DeviceContext& context);

}  // namespace llmprof::device
