// The default generators of a device (llmprof/device/random.h).
#include <ATen/Context.h>

#include "llmprof/device/random.h"
#include "llmprof/error.h"

namespace llmprof::device {

std::vector<NamedGenerator> default_generators(const c10::Device& device) {
  std::vector<NamedGenerator> out{{"cpu", "CPU", at::detail::getDefaultCPUGenerator()}};
  if (!device.is_cuda()) return out;
#if defined(LLMPROF_WITH_CUDA)
  out.push_back({"cuda", "CUDA", at::globalContext().defaultGenerator(device)});
#else
  throw Error("train.resume_from: this llmprof was built without CUDA; no CUDA random state");
#endif
  return out;
}

}  // namespace llmprof::device
