// DeviceContext on the CPU and, in CUDA builds, on a CUDA device (llmprof/device/context.h).
#include <fmt/format.h>
#include <torch/version.h>

#include <cstdlib>
#include <vector>

#include "llmprof/device/context.h"
#include "llmprof/device/device.h"
#include "llmprof/error.h"
#include "llmprof/gpu/activity_source.h"
#include "llmprof/gpu/cupti_source.h"
#include "llmprof/gpu/event_pool.h"
#include "llmprof/telemetry/rusage.h"

#if defined(LLMPROF_WITH_CUDA)
#if __has_include(<c10/cuda/CUDAAllocatorConfig.h>)
#include <c10/cuda/CUDAAllocatorConfig.h>  // setAllocatorSettings, where later LibTorch keeps it
#endif
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <spdlog/spdlog.h>

#include <cstring>
#endif

namespace llmprof::device {

Autocast::Autocast(const config::Device& device, config::Precision precision)
    : device_type(device.is_cuda() ? torch::kCUDA : torch::kCPU),
      dtype(precision == config::Precision::kFp16 ? torch::kHalf : torch::kBFloat16),
      on(precision != config::Precision::kFp32) {}

torch::Device torch_device(const config::Device& device) {
  if (!device.is_cuda()) return torch::kCPU;
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(device.index)};
}

// train.cuda_expandable_segments: the caching allocator's settings (device.h), applied before
// the first CUDA allocation. The allocator reads PYTORCH_CUDA_ALLOC_CONF once, and a call to
// setAllocatorSettings parses its whole string again (options it leaves out go back to their
// defaults): the environment's settings are handed over with expandable segments added.
void configure_cuda_allocator(const config::Config& cfg) {
  if (!cfg.device.is_cuda() || !cfg.train.cuda_expandable_segments) return;
  constexpr const char* kKey = "train.cuda_expandable_segments";
#if defined(LLMPROF_WITH_CUDA) && \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))
  const std::string settings = cuda_allocator_settings(cfg);
  try {
    c10::cuda::CUDACachingAllocator::setAllocatorSettings(settings);
  } catch (const c10::Error& e) {
    throw ConfigError(fmt::format("{}: the CUDA caching allocator refused the settings '{}': {}",
                                  kKey, settings, e.what_without_backtrace()),
                      cfg.source_file, kKey);
  }
  spdlog::info("CUDA caching allocator: {} ({})", settings, kKey);
#else
  throw ConfigError(fmt::format("{}: LibTorch {} has no expandable segments (LibTorch >= 2.1 "
                                "does); set {}=false",
                                kKey, TORCH_VERSION, kKey),
                    cfg.source_file, kKey);
#endif
}

torch::Tensor DeviceContext::copy_to_device(const torch::Tensor& t) const {
  if (!device().is_cuda() || !t.defined()) return t;
  return t.to(device());
}

void move_module(torch::nn::Module& module, const DeviceContext& context) {
  if (context.is_cuda()) module.to(context.device());
}

std::unique_ptr<gpu::ActivitySource> DeviceContext::activity_source() const { return nullptr; }
std::unique_ptr<gpu::EventApi> DeviceContext::event_api() const { return nullptr; }

namespace {

// The STREAM triad roof over bw, "measured".
PeakBytes measured_roof(const PeakBandwidth& bw, const std::string& how) {
  return {bw.triad_bytes_per_s, bw.copy_bytes_per_s, "measured", bw.method + how};
}

class CpuContext : public DeviceContext {
 public:
  torch::Device device() const override { return torch::kCPU; }
  std::string describe() const override { return "cpu"; }

  PeakFlops peak_flops(config::Precision precision) const override {
    const bool bf16 = precision == config::Precision::kBf16;
    const PeakSizes s = peak_sizes({});
    PeakFlops peak = measure_matmul_peak(bf16 ? config::Precision::kBf16 : config::Precision::kFp32,
                                         s.matmul_n, s.matmul_reps);
    // fp32 on a CPU that computes bf16 natively: what bf16 would reach (~0.4 s), for the report.
    if (!bf16 && (cpu_has_flag("avx512_bf16") || cpu_has_flag("amx_bf16"))) {
      peak.bf16_flops_per_s =
          measure_matmul_peak(config::Precision::kBf16, s.matmul_n, s.matmul_reps).flops_per_s;
    }
    return peak;
  }
  PeakBytes peak_bytes() const override {
    const PeakBandwidth bw = measure_memory_bandwidth(0, peak_sizes({}).run_bandwidth_reps);
    // Its arrays are freed: they must not count as the run's peak RSS.
    const bool reset = telemetry::reset_peak_rss();
    return measured_roof(bw, reset ? " (triad; peak RSS reset after it)"
                                   : " (triad; its arrays stay in the peak RSS: "
                                     "/proc/self/clear_refs refused)");
  }
};

#if defined(LLMPROF_WITH_CUDA)

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw Error(fmt::format("{} failed: {} ({})", call, cudaGetErrorName(status),
                            cudaGetErrorString(status)));
  }
}

// Page-locked slot buffers with one event per slot. release() records the slot's event on the
// current stream, after the copies out of it were enqueued; a refill waits for that event, on
// the worker's thread (with workers) or in next()'s data phase (without: the sampling is data
// time there anyway). The step itself never waits on it.
class PinnedSlots : public data::SlotMemory {
 public:
  PinnedSlots(int device, int64_t slots) : device_(device) {
    events_.resize(static_cast<size_t>(slots), nullptr);
    recorded_.resize(static_cast<size_t>(slots), 0);
    for (cudaEvent_t& e : events_) {
      check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    }
  }
  ~PinnedSlots() override {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  PinnedSlots(const PinnedSlots&) = delete;
  PinnedSlots& operator=(const PinnedSlots&) = delete;

  int64_t* allocate(size_t count) override {
    void* p = nullptr;
    check_cuda(cudaHostAlloc(&p, count * sizeof(int64_t), cudaHostAllocDefault), "cudaHostAlloc");
    std::memset(p, 0, count * sizeof(int64_t));
    return static_cast<int64_t*>(p);
  }
  void deallocate(int64_t* buffer) noexcept override { cudaFreeHost(buffer); }
  void released(int64_t slot) override {
    const auto s = static_cast<size_t>(slot);
    if (s >= events_.size()) {
      throw Error(fmt::format("pinned loader slots: slot {} of {}", slot, events_.size()));
    }
    check_cuda(cudaEventRecord(events_[s], c10::cuda::getCurrentCUDAStream(device_).stream()),
               "cudaEventRecord");
    recorded_[s] = 1;  // the loader's mutex orders this before the slot's refill
  }
  void before_fill(int64_t slot) override {
    const auto s = static_cast<size_t>(slot);
    if (s >= events_.size() || recorded_[s] == 0) return;  // never handed out yet
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");  // a worker thread starts on device 0
    // sync: this slot's copy to the device must be done before the host overwrites it.
    check_cuda(cudaEventSynchronize(events_[s]), "cudaEventSynchronize");
  }

 private:
  int device_;
  std::vector<cudaEvent_t> events_;
  std::vector<char> recorded_;
};

class CudaContext : public DeviceContext {
 public:
  CudaContext(int index, int64_t loader_slots) : index_(index) {
    c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
    description_ = fmt::format("cuda:{} ({}, sm_{}{}, {:.1f} GiB)", index, prop.name, prop.major,
                               prop.minor, static_cast<double>(prop.totalGlobalMem) / (1 << 30));
    slots_ = std::make_unique<PinnedSlots>(index, loader_slots);
  }

  torch::Device device() const override {
    return {torch::kCUDA, static_cast<c10::DeviceIndex>(index_)};
  }
  PeakFlops peak_flops(config::Precision precision) const override {
    // MFU against the device's dense datasheet peak, as MFU is usually quoted; a device not in
    // the table gets its measured matmul peak (llmprof peak measures it for any device).
    if (auto sheet = datasheet_peak(cuda_device_name(index_), precision)) return *sheet;
    const PeakSizes s = peak_sizes(where());
    return measure_matmul_peak(precision, s.matmul_n, s.matmul_reps, where());
  }
  PeakBytes peak_bytes() const override {
    return measured_roof(
        measure_memory_bandwidth(0, peak_sizes(where()).run_bandwidth_reps, where()), " (triad)");
  }
  std::unique_ptr<gpu::ActivitySource> activity_source() const override {
    const gpu::CudaAvailability cupti = gpu::CuptiActivitySource::available();
    if (!cupti.available) {
      spdlog::warn("no GPU kernel records: {}", cupti.reason);
      return nullptr;
    }
    return std::make_unique<gpu::CuptiActivitySource>();
  }
  std::unique_ptr<gpu::EventApi> event_api() const override {
    return gpu::make_cuda_event_api(nullptr);  // LibTorch's default stream
  }
  std::string describe() const override { return description_; }
  data::SlotMemory* slot_memory() override { return slots_.get(); }
  torch::Tensor to_device(const torch::Tensor& t) override {
    // From page-locked memory a non_blocking copy is a cudaMemcpyAsync: the host goes on.
    return t.defined() ? t.to(device(), /*non_blocking=*/true) : t;
  }
  void synchronize() override {
    // sync: the caller's timed region ends when the device's work does.
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  std::optional<DeviceMemory> memory() const override { return allocator_memory(where()); }
  void reset_peak_memory() override { reset_allocator_peak(where()); }

 private:
  config::Device where() const { return {config::DeviceKind::kCuda, index_}; }

  int index_;
  std::string description_;
  std::unique_ptr<PinnedSlots> slots_;
};

#endif  // LLMPROF_WITH_CUDA

}  // namespace

std::string cuda_device_name(int index) {
#if defined(LLMPROF_WITH_CUDA)
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
  return prop.name;
#else
  (void)index;
  return "";
#endif
}

std::unique_ptr<DeviceContext> DeviceContext::make(const config::Config& cfg) {
  check_device(cfg);  // cpu, or a cuda device this build and host have
  if (!cfg.device.is_cuda()) return std::make_unique<CpuContext>();
  configure_cuda_allocator(cfg);  // train.cuda_expandable_segments, before the first allocation
#if defined(LLMPROF_WITH_CUDA)
  return std::make_unique<CudaContext>(static_cast<int>(cfg.device.index), cfg.data.prefetch + 1);
#else
  throw ConfigError("device: 'cuda': this llmprof has no CUDA path", cfg.source_file, "device");
#endif
}

}  // namespace llmprof::device
