// CPU/CUDA autocast switches across LibTorch versions (1.13 has set_cpu_enabled; 2.4+ takes a
// device type). Torch TUs only.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace llmprof::model {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
inline bool cpu_autocast_enabled() { return at::autocast::is_autocast_enabled(at::kCPU); }
inline void set_cpu_autocast(bool on, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(at::kCPU, dtype);
  at::autocast::set_autocast_enabled(at::kCPU, on);
}
#else
inline bool cpu_autocast_enabled() { return at::autocast::is_cpu_enabled(); }
inline void set_cpu_autocast(bool on, at::ScalarType dtype) {
  at::autocast::set_autocast_cpu_dtype(dtype);
  at::autocast::set_cpu_enabled(on);
}
#endif

// Enables bf16 CPU autocast for a scope (the forward pass) and clears its weight-cast cache on
// exit, as torch.autocast's context manager does. A no-op when on is false.
class CpuAutocastScope {
 public:
  explicit CpuAutocastScope(bool on) : on_(on) {
    if (on_) set_cpu_autocast(true, at::kBFloat16);
  }
  ~CpuAutocastScope() {
    if (on_) {
      set_cpu_autocast(false, at::kBFloat16);
      at::autocast::clear_cache();
    }
  }
  CpuAutocastScope(const CpuAutocastScope&) = delete;
  CpuAutocastScope& operator=(const CpuAutocastScope&) = delete;

 private:
  bool on_;
};

}  // namespace llmprof::model
