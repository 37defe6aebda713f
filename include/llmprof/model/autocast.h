// CPU/CUDA autocast switches across LibTorch versions (1.13 has set_cpu_enabled and set_enabled for
// CUDA; 2.4+ takes a device type). Torch TUs only.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace llmprof::model {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
inline bool autocast_enabled(at::DeviceType device) {
  return at::autocast::is_autocast_enabled(device);
}
inline at::ScalarType autocast_dtype(at::DeviceType device) {
  return at::autocast::get_autocast_dtype(device);
}
inline void set_autocast(at::DeviceType device, bool on, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(device, dtype);
  at::autocast::set_autocast_enabled(device, on);
}
#else  // 1.13 .. 2.3: CPU and CUDA ("gpu") have their own calls
inline bool autocast_enabled(at::DeviceType device) {
  return device == at::kCPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
}
inline at::ScalarType autocast_dtype(at::DeviceType device) {
  return device == at::kCPU ? at::autocast::get_autocast_cpu_dtype()
                            : at::autocast::get_autocast_gpu_dtype();
}
inline void set_autocast(at::DeviceType device, bool on, at::ScalarType dtype) {
  if (device == at::kCPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(on);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(on);
  }
}
#endif
inline bool cpu_autocast_enabled() { return autocast_enabled(at::kCPU); }
inline void set_cpu_autocast(bool on, at::ScalarType dtype) { set_autocast(at::kCPU, on, dtype); }

// Enables autocast to dtype on a device type for a scope (the forward pass) and clears the
// weight-cast cache on exit, as torch.autocast's context manager does. A no-op when on is false.
class AutocastScope {
 public:
  AutocastScope(at::DeviceType device, at::ScalarType dtype, bool on)
      : device_(device), dtype_(dtype), on_(on) {
    if (on_) set_autocast(device_, true, dtype_);
  }
  ~AutocastScope() {
    if (on_) {
      set_autocast(device_, false, dtype_);
      at::autocast::clear_cache();
    }
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  at::DeviceType device_;
  at::ScalarType dtype_;
  bool on_;
};

// bf16 CPU autocast for a scope; a no-op when on is false.
class CpuAutocastScope : public AutocastScope {
 public:
  explicit CpuAutocastScope(bool on) : AutocastScope(at::kCPU, at::kBFloat16, on) {}
};

}  // namespace llmprof::model
