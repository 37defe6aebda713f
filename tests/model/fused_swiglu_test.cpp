// model.fused_swiglu (llmprof/model/fused_swiglu.h) against LibTorch's silu(gate) * up under
// autograd: the output and both gradients in fp32 and bf16 at odd sizes; Llama trained with the
// key on and off. FusedSwigluCuda.* run the same through the kernels and skip without them.
#include "llmprof/model/fused_swiglu.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "llmprof/model/llama.h"

namespace llmprof::model {
namespace {

// out, d gate, d up of silu(gate) * up under an upstream gradient, fused or LibTorch's ops.
std::vector<torch::Tensor> swiglu_outputs(bool fused,
                                          torch::ScalarType type,
                                          torch::Device device,
                                          std::vector<int64_t> shape) {
  torch::manual_seed(21);
  torch::Tensor gate = (torch::randn(shape) * 3).to(device, type).requires_grad_(true);
  torch::Tensor up = torch::randn(shape).to(device, type).requires_grad_(true);
  torch::Tensor out = fused ? swiglu(gate, up) : torch::silu(gate) * up;
  const torch::Tensor g = torch::randn(shape).to(device, type);
  out.backward(g);
  return {out, gate.grad(), up.grad()};
}

void expect_swiglu_matches(torch::ScalarType type,
                           torch::Device device,
                           std::vector<int64_t> shape,
                           double tol) {
  static const char* kNames[] = {"out", "d gate", "d up"};
  const auto a = swiglu_outputs(true, type, device, shape);
  const auto b = swiglu_outputs(false, type, device, shape);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].scalar_type(), b[i].scalar_type()) << kNames[i];
    const torch::Tensor x = a[i].to(torch::kCPU, torch::kDouble);
    const torch::Tensor y = b[i].to(torch::kCPU, torch::kDouble);
    const double diff = (x - y).abs().max().item<double>();
    const double scale = std::max(1.0, y.abs().max().item<double>());
    EXPECT_LE(diff / scale, tol) << kNames[i] << ": max |diff| " << diff << " at scale " << scale
                                 << ", " << c10::toString(type) << " " << c10::str(shape) << " on "
                                 << device.str();
  }
}

TEST(FusedSwiglu, MatchesSiluTimesUpInFp32AndBf16) {
  expect_swiglu_matches(torch::kFloat, torch::kCPU, {7, 129}, 1e-6);
  // bf16: the same roundings in the same order (silu's output, then the product; the gradient
  // of silu's output, then silu's backward); LibTorch 1.13's CPU bf16 silu_backward also rounds
  // some of its own intermediate steps: a few ulps (2^-8 relative) apart at most.
  expect_swiglu_matches(torch::kBFloat16, torch::kCPU, {3, 5, 67}, 2e-2);
}

TEST(FusedSwiglu, RefusesDifferentShapes) {
  EXPECT_THROW(swiglu(torch::zeros({2, 3}), torch::zeros({3, 2})), std::invalid_argument);
}

TEST(FusedSwiglu, LlamaTrainsAsUnfused) {
  torch::manual_seed(7);
  const torch::Tensor x = torch::randint(41, {3, 12}, torch::kLong);
  const torch::Tensor y = torch::randint(41, {3, 12}, torch::kLong);
  std::vector<double> losses[2];
  for (bool fused : {false, true}) {
    LlamaOptions o;
    o.n_layer = 2;
    o.n_head = 4;
    o.n_kv_head = 2;
    o.n_embd = 32;
    o.intermediate_size = 72;
    o.block_size = 12;
    o.vocab_size = 41;
    o.fused_swiglu = fused;
    o.fused_norm = fused;  // both fused ops together, as a CUDA config would run them
    torch::manual_seed(8);
    Llama m(o);
    torch::optim::AdamW opt(m->parameters(), torch::optim::AdamWOptions(1e-2));
    for (int s = 0; s < 5; ++s) {
      opt.zero_grad();
      torch::Tensor l = m->loss(m->forward(x), y);
      l.backward();
      opt.step();
      losses[fused].push_back(l.item<double>());
    }
  }
  for (size_t i = 0; i < losses[0].size(); ++i) {
    EXPECT_NEAR(losses[1][i], losses[0][i], 1e-5 * losses[0][i]) << "step " << i + 1;
  }
}

bool swiglu_cuda(std::string& why) {
  if (!torch::cuda::is_available()) {
    why = "no CUDA device";
  } else if (!fused_swiglu_kernels_available()) {
    why = "this build has no CUDA kernels (the CUDA build with nvcc builds them)";
  }
  return why.empty();
}

TEST(FusedSwigluCuda, KernelsMatchSiluTimesUp) {
  std::string why;
  if (!swiglu_cuda(why)) GTEST_SKIP() << why;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{7, 129}, {4, 64, 2304}}) {
    expect_swiglu_matches(torch::kFloat, torch::kCUDA, shape, 1e-5);
    expect_swiglu_matches(torch::kBFloat16, torch::kCUDA, shape, 1e-2);
    expect_swiglu_matches(torch::kHalf, torch::kCUDA, shape, 2e-3);
  }
}

}  // namespace
}  // namespace llmprof::model
