#include "checkpoint.h"

#include "llmprof/model/autocast.h"
#include "llmprof/model/gpt.h"
#include "llmprof/model/llama.h"

namespace llmprof::model {

namespace {

template <typename Block>
class CheckpointFunction : public torch::autograd::Function<CheckpointFunction<Block>> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx,
                               torch::Tensor x,
                               Block* block) {
    ctx->save_for_backward({x});
    ctx->saved_data["block"] = reinterpret_cast<int64_t>(block);
    // The recompute runs under the autocast of the forward, on the input's device type.
    const at::DeviceType device = x.device().type();
    ctx->saved_data["autocast"] = autocast_enabled(device);
    ctx->saved_data["autocast_dtype"] = static_cast<int64_t>(autocast_dtype(device));
    // The CPU generator state, so dropout masks in the recompute equal the original ones (on
    // CUDA, dropout > 0 with checkpointing would draw new masks: the CUDA generator is not kept).
    ctx->saved_data["rng"] = at::detail::getDefaultCPUGenerator().get_state();
    return block->forward(x);  // runs with grad disabled: no activations kept
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto* block = reinterpret_cast<Block*>(ctx->saved_data["block"].toInt());
    torch::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    auto gen = at::detail::getDefaultCPUGenerator();
    torch::Tensor rng_now = gen.get_state();
    gen.set_state(ctx->saved_data["rng"].toTensor());
    torch::Tensor y;
    {
      torch::AutoGradMode grad_on(true);
      AutocastScope autocast(
          x.device().type(),
          static_cast<at::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()),
          ctx->saved_data["autocast"].toBool());
      y = block->forward(x);
    }
    gen.set_state(rng_now);
    torch::autograd::backward({y}, {grad_out[0]});
    return {x.grad(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor checkpointed_forward(BlockImpl* block, const torch::Tensor& x) {
  return CheckpointFunction<BlockImpl>::apply(x, block);
}

torch::Tensor checkpointed_forward(LlamaBlockImpl* block, const torch::Tensor& x) {
  return CheckpointFunction<LlamaBlockImpl>::apply(x, block);
}

}  // namespace llmprof::model
