// train.cuda_graphs: the training step captured once as a CUDA graph and replayed each step, so
// that the host launches one graph instead of a few thousand kernels.
#pragma once

#include <functional>
#include <memory>

namespace llmprof::train {

class StepGraph {
 public:
  // On cuda:device_index. Throws Error in a build without CUDA, or a LibTorch older than 2.4.
  static std::unique_ptr<StepGraph> make(int device_index);
  virtual ~StepGraph() = default;

  // Runs warmup once on a side stream of the device (so that libraries set up their handles and
  // workspaces there), then captures body on that stream: body's kernels are recorded, not run.
  // Autocast's weight cache is off meanwhile (cached casts would escape the graph); the capture
  // is thread-local, so the loader's threads may go on. Between steps only: it synchronizes.
  virtual void capture(const std::function<void()>& warmup, const std::function<void()>& body) = 0;
  // Launches the captured step on the current stream: one host call, no sync.
  virtual void replay() = 0;
};

}  // namespace llmprof::train
