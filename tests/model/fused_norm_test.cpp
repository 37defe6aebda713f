// model.fused_norm (llmprof/model/fused_norm.h) against the unfused path it replaces: residual +
// delta, then torch::layer_norm or Hugging Face's RMSNorm, under autograd. Forward (the sum and
// the norm) and backward (both addends, weight and bias, with upstream gradients on the sum and
// on the norm: the residual's own gradient passes through) in fp32, bf16 and an fp32 stream plus
// a bf16 delta (autocast's mix), at odd sizes (7 rows of 129: no vectorized loads) and aligned
// ones. On the CPU this checks the LibTorch path's hand-written backward; FusedNormCuda.* run the
// same checks on CUDA, through the kernels where the build has them, and skip elsewhere.
#include "llmprof/model/fused_norm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmprof/model/autocast.h"
#include "llmprof/model/distilbert.h"
#include "llmprof/model/gpt.h"
#include "llmprof/model/llama.h"

namespace llmprof::model {
namespace {

struct Case {
  torch::Device device = torch::kCPU;
  torch::ScalarType residual = torch::kFloat, delta = torch::kFloat, weight = torch::kFloat;
  int64_t rows = 7, width = 129;
  bool bias = true;
  double tol = 1e-5;  // on max |fused - unfused| / max(1, max |unfused|), per tensor
};

std::string describe(const Case& c) {
  return std::string(c10::toString(c.residual)) + " + " + c10::toString(c.delta) + ", weight " +
         c10::toString(c.weight) + ", " + std::to_string(c.rows) + " x " + std::to_string(c.width) +
         (c.bias ? ", bias" : "") + " on " + c.device.str();
}

// The leaves of one evaluation: fresh copies of the same values, requiring grad.
struct Leaves {
  torch::Tensor residual, delta, weight, bias;
};

Leaves leaves(const Case& c, uint64_t seed) {
  torch::manual_seed(seed);
  const auto on = [&](torch::Tensor t, torch::ScalarType type) {
    return t.to(c.device, type).detach().requires_grad_(true);
  };
  Leaves l;
  // A residual stream far from zero mean (as in a trained model) and a smaller layer output.
  l.residual = on(torch::randn({c.rows, c.width}) * 2 + 0.5, c.residual);
  l.delta = on(torch::randn({c.rows, c.width}) * 0.5, c.delta);
  l.weight = on(1 + 0.1 * torch::randn({c.width}), c.weight);
  if (c.bias) l.bias = on(0.1 * torch::randn({c.width}), c.weight);
  return l;
}

// h, norm and the gradients of residual, delta, weight (and bias) under upstream gradients
// g_h and g_n on the sum and the norm (fixed by the seed).
std::vector<torch::Tensor> evaluate(const Case& c, bool fused, bool rms) {
  Leaves l = leaves(c, 11);
  torch::Tensor h, n;
  if (fused) {
    std::tie(h, n) = rms ? add_rms_norm(l.residual, l.delta, l.weight, 1e-5)
                         : add_layer_norm(l.residual, l.delta, l.weight, l.bias, 1e-5);
  } else if (rms) {  // RmsNormImpl::forward of the sum
    h = l.residual + l.delta;
    const torch::Tensor h32 = h.to(torch::kFloat);
    n = l.weight * (h32 * torch::rsqrt(h32.pow(2).mean(-1, true) + 1e-5)).to(h.scalar_type());
  } else {
    h = l.residual + l.delta;
    n = torch::layer_norm(h, {c.width}, l.weight, l.bias, 1e-5);
  }
  torch::manual_seed(12);
  const torch::Tensor g_h = torch::randn({c.rows, c.width}).to(c.device);
  const torch::Tensor g_n = torch::randn({c.rows, c.width}).to(c.device);
  ((h.to(torch::kFloat) * g_h).sum() + (n.to(torch::kFloat) * g_n).sum()).backward();
  std::vector<torch::Tensor> out = {h, n, l.residual.grad(), l.delta.grad(), l.weight.grad()};
  if (c.bias && !rms) out.push_back(l.bias.grad());
  return out;
}

void expect_matches_unfused(const Case& c, bool rms) {
  static const char* kNames[] = {"sum", "norm", "d residual", "d delta", "d weight", "d bias"};
  const auto fused = evaluate(c, true, rms), unfused = evaluate(c, false, rms);
  ASSERT_EQ(fused.size(), unfused.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    ASSERT_TRUE(fused[i].defined()) << kNames[i] << ": " << describe(c);
    EXPECT_EQ(fused[i].scalar_type(), unfused[i].scalar_type()) << kNames[i] << ": " << describe(c);
    EXPECT_EQ(fused[i].sizes(), unfused[i].sizes()) << kNames[i];
    const torch::Tensor a = fused[i].to(torch::kCPU, torch::kDouble);
    const torch::Tensor b = unfused[i].to(torch::kCPU, torch::kDouble);
    const double diff = (a - b).abs().max().item<double>();
    const double scale = std::max(1.0, b.abs().max().item<double>());
    EXPECT_LE(diff / scale, c.tol) << (rms ? "rms " : "layer norm ") << kNames[i] << ": max |diff| "
                                   << diff << " at scale " << scale << ", " << describe(c);
  }
}

Case bf16(Case c) {
  c.residual = c.delta = c.weight = torch::kBFloat16;
  c.tol = 2e-2;  // a few bf16 ulps (2^-8) on values of order 1, gradients summed over rows
  return c;
}

Case mixed(Case c) {           // autocast: an fp32 stream plus a bf16 layer output, fp32 weights
  c.delta = torch::kBFloat16;  // the sum is fp32: the case's fp32 tolerance holds
  return c;
}

TEST(FusedNorm, AddLayerNormMatchesAddThenLayerNormFp32) {
  expect_matches_unfused(Case{}, false);
  Case no_bias;
  no_bias.bias = false;
  expect_matches_unfused(no_bias, false);
}

TEST(FusedNorm, AddLayerNormMatchesAddThenLayerNormBf16AndMixed) {
  expect_matches_unfused(bf16(Case{}), false);
  expect_matches_unfused(mixed(Case{}), false);
}

TEST(FusedNorm, AddRmsNormMatchesAddThenRmsNorm) {
  Case c;
  c.bias = false;
  expect_matches_unfused(c, true);
  expect_matches_unfused(bf16(c), true);
  expect_matches_unfused(mixed(c), true);
  Case half_sum = bf16(c);  // bf16 sum with an fp32 weight: the norm comes out fp32 (as HF's)
  half_sum.weight = torch::kFloat;
  expect_matches_unfused(half_sum, true);
}

TEST(FusedNorm, RefusesMismatchedShapesNamingThem) {
  const torch::Tensor a = torch::zeros({2, 4}), b = torch::zeros({2, 3}), w = torch::ones({4});
  try {
    add_layer_norm(a, b, w, torch::Tensor(), 1e-5);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[add_layer_norm]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 3]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(add_rms_norm(a, a, torch::ones({3}), 1e-5), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The models with the key on against off: the same weights (same seed), loss and gradients, and
// the losses of a few AdamW steps on the same batches.

// Autograd nodes of the graph behind t whose name contains `name`.
int count_nodes(const torch::Tensor& t, const std::string& name) {
  std::vector<torch::autograd::Node*> stack{t.grad_fn().get()};
  std::set<torch::autograd::Node*> seen;
  int n = 0;
  while (!stack.empty()) {
    torch::autograd::Node* node = stack.back();
    stack.pop_back();
    if (node == nullptr || !seen.insert(node).second) continue;
    n += node->name().find(name) != std::string::npos;
    for (const auto& edge : node->next_edges()) stack.push_back(edge.function.get());
  }
  return n;
}

struct Training {
  std::vector<double> losses;
  std::vector<torch::Tensor> first_grads;  // of every parameter, at step 1
  int fused_nodes = 0;                     // AddLayerNorm / AddRmsNorm nodes in step 1's graph
};

template <typename Model>
Training train(Model m, const std::function<torch::Tensor(Model&)>& loss, int steps) {
  torch::optim::AdamW opt(m->parameters(), torch::optim::AdamWOptions(1e-2));
  Training t;
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    torch::Tensor l = loss(m);
    if (s == 0) t.fused_nodes = count_nodes(l, "AddLayerNorm") + count_nodes(l, "AddRmsNorm");
    l.backward();
    if (s == 0) {
      for (const auto& p : m->parameters()) t.first_grads.push_back(p.grad().clone());
    }
    opt.step();
    t.losses.push_back(l.item<double>());
  }
  return t;
}

// The losses within tol (relative) and step 1's gradients within grad_tol of the largest
// (default 100 x tol).
void expect_same_training(
    const Training& on, const Training& off, double tol, const char* what, double grad_tol = 0) {
  if (grad_tol == 0) grad_tol = 100 * tol;
  ASSERT_EQ(on.losses.size(), off.losses.size());
  for (size_t i = 0; i < on.losses.size(); ++i) {
    EXPECT_NEAR(on.losses[i], off.losses[i], tol * std::abs(off.losses[i]))
        << what << " step " << i + 1 << ": " << on.losses[i] << " (fused) vs " << off.losses[i];
  }
  ASSERT_EQ(on.first_grads.size(), off.first_grads.size());
  for (size_t i = 0; i < on.first_grads.size(); ++i) {
    const torch::Tensor a = on.first_grads[i].to(torch::kCPU, torch::kDouble);
    const torch::Tensor b = off.first_grads[i].to(torch::kCPU, torch::kDouble);
    const double diff = (a - b).abs().max().item<double>();
    const double scale = b.abs().max().item<double>();
    EXPECT_LE(diff, grad_tol * scale)
        << what << " parameter " << i << ": max |diff| " << diff << " at scale " << scale;
  }
  EXPECT_EQ(off.fused_nodes, 0) << what;
}

GptOptions fused_norm_gpt(bool fused) {
  GptOptions o;
  o.n_layer = 2;
  o.n_head = 2;
  o.n_embd = 36;
  o.block_size = 12;
  o.vocab_size = 41;
  o.fused_norm = fused;
  return o;
}

TEST(FusedNormModels, GptTrainsAsUnfusedWithAndWithoutCheckpointing) {
  torch::manual_seed(5);
  const torch::Tensor x = torch::randint(41, {3, 12}, torch::kLong);
  const torch::Tensor y = torch::randint(41, {3, 12}, torch::kLong);
  auto loss = std::function<torch::Tensor(Gpt&)>([&](Gpt& m) { return m->loss(m->forward(x), y); });
  for (bool checkpointing : {false, true}) {
    Training runs[2];
    for (bool fused : {false, true}) {
      GptOptions o = fused_norm_gpt(fused);
      o.activation_checkpointing = checkpointing;
      o.bias = !checkpointing;  // GPT-2 small's LayerNorm has no bias
      torch::manual_seed(6);
      runs[fused] = train(Gpt(o), loss, 5);
    }
    expect_same_training(runs[1], runs[0], 1e-5, checkpointing ? "gpt, checkpointed" : "gpt");
    // Per block ln_2, and ln_1 of every block but the first, then ln_f: 2 + 2 - 1 + 1. The
    // checkpointed blocks' nodes sit in the recomputed graph, out of sight here.
    if (!checkpointing) {
      EXPECT_EQ(runs[1].fused_nodes, 4);
    }
  }
}

// Dropout stays LibTorch's op before the fused add: the same masks from the same seed.
TEST(FusedNormModels, GptWithDropoutTrainsAsUnfused) {
  torch::manual_seed(5);
  const torch::Tensor x = torch::randint(41, {3, 12}, torch::kLong);
  const torch::Tensor y = torch::randint(41, {3, 12}, torch::kLong);
  auto loss = std::function<torch::Tensor(Gpt&)>([&](Gpt& m) { return m->loss(m->forward(x), y); });
  Training runs[2];
  for (bool fused : {false, true}) {
    GptOptions o = fused_norm_gpt(fused);
    o.dropout = 0.1;
    torch::manual_seed(6);
    runs[fused] = train(Gpt(o), loss, 5);
  }
  expect_same_training(runs[1], runs[0], 1e-5, "gpt, dropout 0.1");
}

TEST(FusedNormModels, GptTrainsAsUnfusedUnderBf16Autocast) {
  torch::manual_seed(5);
  const torch::Tensor x = torch::randint(41, {3, 12}, torch::kLong);
  const torch::Tensor y = torch::randint(41, {3, 12}, torch::kLong);
  auto loss = std::function<torch::Tensor(Gpt&)>([&](Gpt& m) {
    torch::Tensor logits;
    {
      CpuAutocastScope autocast(true);  // bf16 layer outputs on an fp32 stream
      logits = m->forward(x);
    }
    return m->loss(logits, y);
  });
  Training runs[2];
  for (bool fused : {false, true}) {
    torch::manual_seed(6);
    runs[fused] = train(Gpt(fused_norm_gpt(fused)), loss, 5);
  }
  // bf16 noise: the sum's gradient agrees to fp32 rounding, but its cast to the bf16 layer
  // output's gradient flips an ulp (2^-8) here and there, and Adam's normalised steps carry that
  // into the loss at the 1e-4 level within 5 steps.
  expect_same_training(runs[1], runs[0], 1e-3, "gpt, bf16 autocast", 1e-3);
  EXPECT_EQ(runs[1].fused_nodes, 4);
}

TEST(FusedNormModels, LlamaTrainsAsUnfused) {
  torch::manual_seed(7);
  const torch::Tensor x = torch::randint(41, {3, 12}, torch::kLong);
  const torch::Tensor y = torch::randint(41, {3, 12}, torch::kLong);
  auto loss =
      std::function<torch::Tensor(Llama&)>([&](Llama& m) { return m->loss(m->forward(x), y); });
  Training runs[2];
  for (bool fused : {false, true}) {
    LlamaOptions o;
    o.n_layer = 2;
    o.n_head = 4;
    o.n_kv_head = 2;
    o.n_embd = 32;
    o.block_size = 12;
    o.vocab_size = 41;
    o.fused_norm = fused;
    torch::manual_seed(8);
    runs[fused] = train(Llama(o), loss, 5);
  }
  expect_same_training(runs[1], runs[0], 1e-5, "llama");
  EXPECT_EQ(runs[1].fused_nodes, 4);  // as GPT's: post_attention, input (blocks 1..), final norm
}

TEST(FusedNormModels, DistilBertTrainsAsUnfused) {
  torch::manual_seed(9);
  const torch::Tensor x = torch::randint(41, {3, 12}, torch::kLong);
  const torch::Tensor pos = torch::randint(12, {3, 4}, torch::kLong);
  const torch::Tensor y = torch::randint(41, {3, 4}, torch::kLong);
  auto loss = std::function<torch::Tensor(DistilBert&)>(
      [&](DistilBert& m) { return m->loss(m->mlm_logits(m->encode(x, torch::Tensor()), pos), y); });
  Training runs[2];
  for (bool fused : {false, true}) {
    DistilBertOptions o;
    o.n_layer = 2;
    o.n_head = 2;
    o.dim = 32;
    o.hidden_dim = 64;
    o.vocab_size = 41;
    o.max_positions = 12;
    o.dropout = o.attention_dropout = 0;
    o.fused_norm = fused;
    torch::manual_seed(10);
    runs[fused] = train(DistilBert(o), loss, 5);
  }
  expect_same_training(runs[1], runs[0], 1e-5, "distilbert");
  EXPECT_EQ(runs[1].fused_nodes, 4);  // sa_layer_norm and output_layer_norm of 2 blocks
}

// ---------------------------------------------------------------------------------------------
// CUDA: the same checks through the kernels (scripts/gpu/run_device.sh fusednorm runs
// test_model --gtest_filter='FusedNorm*' on the GPU host).

bool cuda_kernels(std::string& why) {
  if (!torch::cuda::is_available()) {
    why = "no CUDA device";
  } else if (!fused_norm_kernels_available()) {
    why = "this build has no CUDA kernels (the CUDA build with nvcc builds them)";
  }
  return why.empty();
}

#define LLMPROF_NEED_CUDA_KERNELS()              \
  do {                                           \
    std::string why;                             \
    if (!cuda_kernels(why)) GTEST_SKIP() << why; \
  } while (0)

TEST(FusedNormCuda, KernelsMatchUnfusedAtOddAndAlignedSizes) {
  LLMPROF_NEED_CUDA_KERNELS();
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{7, 129}, {64, 768}, {33, 8192}}) {
    Case c;
    c.device = torch::kCUDA;
    c.rows = rows;
    c.width = width;
    c.tol = 1e-4;  // fp32: another summation order over up to 8192 columns and 64 rows
    for (bool rms : {false, true}) {
      c.bias = !rms;
      expect_matches_unfused(c, rms);
      expect_matches_unfused(mixed(c), rms);
      expect_matches_unfused(bf16(c), rms);
    }
  }
}

TEST(FusedNormCuda, WiderThanTheKernelsTakesTheLibTorchPath) {
  LLMPROF_NEED_CUDA_KERNELS();
  Case c;
  c.device = torch::kCUDA;
  c.rows = 3;
  c.width = 16385;
  c.tol = 1e-4;
  expect_matches_unfused(c, false);
}

TEST(FusedNormCuda, BackwardIsDeterministic) {
  LLMPROF_NEED_CUDA_KERNELS();
  Case c;
  c.device = torch::kCUDA;
  c.rows = 4096;
  c.width = 768;
  const auto a = evaluate(c, true, false), b = evaluate(c, true, false);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "output " << i;
}

TEST(FusedNormCuda, GptBf16AutocastTrainsAsUnfused) {
  LLMPROF_NEED_CUDA_KERNELS();
  torch::manual_seed(5);
  const torch::Tensor x = torch::randint(41, {4, 12}, torch::kLong).to(torch::kCUDA);
  const torch::Tensor y = torch::randint(41, {4, 12}, torch::kLong).to(torch::kCUDA);
  auto loss = std::function<torch::Tensor(Gpt&)>([&](Gpt& m) {
    torch::Tensor logits;
    {
      AutocastScope autocast(at::kCUDA, torch::kBFloat16, true);  // as train.precision=bf16
      logits = m->forward(x);
    }
    return m->loss(logits, y);
  });
  Training runs[2];
  for (bool fused : {false, true}) {
    torch::manual_seed(6);
    Gpt m(fused_norm_gpt(fused));
    m->to(torch::kCUDA);
    runs[fused] = train(m, loss, 5);
  }
  // bf16 matmuls on identical inputs; the norms' fp32 outputs differ in the last bits only.
  expect_same_training(runs[1], runs[0], 2e-3, "gpt bf16 autocast on cuda", 1e-2);
  EXPECT_EQ(runs[1].fused_nodes, 4);
}

}  // namespace
}  // namespace llmprof::model
