#include "cuda_graph.h"

#include <torch/torch.h>
#include <torch/version.h>

#include "llmprof/error.h"
#include "llmprof/model/autocast.h"

#if defined(LLMPROF_WITH_CUDA) && !defined(LLMPROF_NO_TORCH2_FAST_PATHS) && \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
#define LLMPROF_CUDA_GRAPHS 1
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>
#endif

namespace llmprof::train {

#if defined(LLMPROF_CUDA_GRAPHS)
namespace {

class CudaStepGraph : public StepGraph {
 public:
  explicit CudaStepGraph(int device) : device_(static_cast<c10::DeviceIndex>(device)) {}

  void capture(const std::function<void()>& warmup, const std::function<void()>& body) override {
    // sync: between steps, so the side stream starts after everything queued so far.
    torch::cuda::synchronize(device_);
    const bool cache = at::autocast::is_autocast_cache_enabled();
    at::autocast::set_autocast_cache_enabled(false);
    struct RestoreCache {
      bool on;
      ~RestoreCache() { at::autocast::set_autocast_cache_enabled(on); }
    } restore{cache};
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, device_);
    {
      c10::cuda::CUDAStreamGuard guard(side);
      warmup();
      torch::cuda::synchronize(device_);
      // The eager steps' and the warm-up's cached blocks belong to other streams and the graph
      // cannot reuse them: hand them back first, as torch.cuda.graph does (an H100 ran out of
      // memory capturing GPT-2 small at batch 48 with 54 GB reserved but unallocated).
      c10::cuda::CUDACachingAllocator::emptyCache();
      graph_.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      body();
      graph_.capture_end();
    }
    torch::cuda::synchronize(device_);
  }

  void replay() override { graph_.replay(); }

 private:
  c10::DeviceIndex device_;
  at::cuda::CUDAGraph graph_;
};

}  // namespace

std::unique_ptr<StepGraph> StepGraph::make(int device_index) {
  return std::make_unique<CudaStepGraph>(device_index);
}
#else
std::unique_ptr<StepGraph> StepGraph::make(int) {
  throw Error("train.cuda_graphs: this llmprof was built without CUDA graphs (a CUDA build "
              "against LibTorch >= 2.4, scripts/build_gpu.sh)");
}
#endif

}  // namespace llmprof::train
