// Where a run trains. On the CPU nothing moves. On a CUDA device (a CUDA build, LLMPROF_WITH_CUDA)
// the model, optimizer state, eval batches and each training batch live on the device: the
// loader's slots are pinned (page-locked) so a batch is copied with non_blocking while the host
// goes on, and each slot is fenced by a CUDA event so a worker never refills it while its copy is
// still in flight. llmprof train, eval and bench run on it (torch).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "llmprof/config/config.h"
#include "llmprof/data/loader.h"
#include "llmprof/train/calibrate.h"
#include "llmprof/train/task.h"
#include "llmprof/train/device_memory.h"

namespace llmprof::gpu {
class ActivitySource;
}

namespace llmprof::train {

// The autocast of a run's precision on its device: bf16 (CPU, CUDA) or fp16 (CUDA); off at fp32.
struct Autocast {
  explicit Autocast(const config::Config& cfg)
      : Autocast(cfg.device, cfg.train.precision) {}
  Autocast(const config::Device& device, config::Precision precision)
      : device_type(device.is_cuda() ? torch::kCUDA : torch::kCPU),
        dtype(precision == config::Precision::kFp16 ? torch::kHalf : torch::kBFloat16),
        on(precision != config::Precision::kFp32) {}
  torch::DeviceType device_type;
  torch::ScalarType dtype;
  bool on;
};

// The torch device of a config device: kCPU, or kCUDA with its ordinal.
inline torch::Device torch_device(const config::Device& device) {
  if (!device.is_cuda()) return torch::kCPU;
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(device.index)};
}

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
  // A batch wrapping loader memory, on the device: an asynchronous copy from the pinned slot
  // (the slot's fence is recorded when the loader releases it). The batch itself on the CPU.
  virtual Batch to_device(const Batch& b) { return b; }
  // A batch owned by the caller (eval sets), copied to the device once.
  Batch copy_to_device(const Batch& b) const;

  // The peak FLOP/s MFU divides by at precision. CUDA: the device's dense datasheet figure (one
  // the table lacks: a measured 8192^3 matmul, best of 10). CPU: a measured 2048^3 matmul, best
  // of 5 (bf16 or fp32; fp32 on a CPU with native bf16 measures the bf16 peak beside it).
  virtual PeakFlops peak_flops(config::Precision precision) const = 0;
  // The memory roof measured on this device's memory: STREAM triad, best of 3 (the CPU's
  // arrays then leave the peak RSS where /proc/self/clear_refs allows it).
  virtual PeakBytes peak_bytes() const = 0;
  // Where the GPU activity of recorded windows comes from: CUPTI on a CUDA device whose build and
  // host have it (else null, and the log says why); null on the CPU.
  virtual std::unique_ptr<gpu::ActivitySource> activity_source() const;

  // Waits for the device's queued work (the end of timed regions in bench, never in a step).
  virtual void synchronize() {}
  // The caching allocator's counters; null on the CPU. reset_peak: start a new peak window.
  virtual std::optional<DeviceMemory> memory() const { return std::nullopt; }
  virtual void reset_peak_memory() {}
};

// Moves a module's parameters and buffers to the context's device (a no-op on the CPU).
void move_module(torch::nn::Module& module, const DeviceContext& context);

}  // namespace llmprof::train
