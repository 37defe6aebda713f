// EventApi on the CUDA runtime. Compiled for real where CMake found the CUDA toolkit and LibTorch
// has CUDA (LLMPROF_HAVE_CUDART); elsewhere make_cuda_event_api() says why there are no events.
#include "llmprof/gpu/event_pool.h"
#include "llmprof/gpu/gpu_error.h"

#if defined(LLMPROF_HAVE_CUDART)

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace llmprof::gpu {

namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw GpuError(fmt::format("{} failed: {} ({})", call, cudaGetErrorName(status),
                               cudaGetErrorString(status)));
  }
}

class CudaEventApi : public EventApi {
 public:
  explicit CudaEventApi(void* stream) : stream_(static_cast<cudaStream_t>(stream)) {}

  Event create() override {
    cudaEvent_t e = nullptr;
    // Timing enabled (no cudaEventDisableTiming); cudaEventBlockingSync would make the one
    // synchronize below sleep instead of spin, at the cost of wake-up latency after the step.
    check(cudaEventCreateWithFlags(&e, cudaEventDefault), "cudaEventCreateWithFlags");
    return e;
  }
  void destroy(Event event) noexcept override {
    if (event != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }
  void record(Event event) override {
    check(cudaEventRecord(static_cast<cudaEvent_t>(event), stream_), "cudaEventRecord");
  }
  void synchronize(Event event) override {
    // sync: blocks the host until the event completes (PhaseEventPool::resolve, after the step).
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
  }
  float elapsed_ms(Event start, Event end) override {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
          "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<EventApi> make_cuda_event_api(void* stream) {
  return std::make_unique<CudaEventApi>(stream);
}

}  // namespace llmprof::gpu

#else  // no CUDA runtime in this build

namespace llmprof::gpu {

std::unique_ptr<EventApi> make_cuda_event_api(void* /*stream*/) {
  throw GpuError(
      "CUDA events: this llmprof was built without the CUDA runtime (CPU-only "
      "LibTorch or no CUDA toolkit found); rebuild with scripts/build_gpu.sh");
}

}  // namespace llmprof::gpu

#endif
