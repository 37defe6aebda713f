// Stand-in for LibTorch's distributed-autograd context header, which c10d's reducer.hpp includes
// (torch/csrc/distributed/c10d/reducer.hpp, line 23 in Debian's LibTorch 1.13) but Debian's
// libtorch-dev does not ship. reducer.hpp needs only two names from it: the GradCallback type
// (checked by a static_assert) and ContextPtr (a shared_ptr member of Reducer::RpcContext). Both
// are declared here with the definitions LibTorch uses, so Reducer's layout is unchanged: a
// shared_ptr and an atomic pointer have the same size whatever they point to. cmake/LlmprofDist
// puts this directory on the include path only where the real header is missing.
#pragma once

#include <functional>
#include <memory>

namespace at {
class Tensor;
}

namespace torch::distributed::autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};

using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
