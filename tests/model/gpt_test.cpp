#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "llmprof/model/flops.h"
#include "llmprof/model/gpt.h"

namespace llmprof::model {
namespace {

GptOptions gpt_tiny(bool bias = true) {
  GptOptions o;
  o.n_layer = 2;
  o.n_head = 2;
  o.n_embd = 32;
  o.block_size = 16;
  o.vocab_size = 65;
  o.bias = bias;
  return o;
}

TEST(GptParameters, MatchClosedFormWithAndWithoutBias) {
  for (bool bias : {true, false}) {
    torch::manual_seed(0);
    Gpt m(gpt_tiny(bias));
    GptShape s{2, 2, 32, 16, 65, bias};
    EXPECT_EQ(m->num_parameters(), gpt_parameter_count(s)) << "bias=" << bias;
  }
  // Hand-computed: V*C + T*C + L*(12C^2 + 13C) + 2C = 2080 + 512 + 2*(12288 + 416) + 64.
  EXPECT_EQ(gpt_parameter_count({2, 2, 32, 16, 65, true}), 2080 + 512 + 2 * (12288 + 416) + 64);
}

TEST(GptLoss, FreshModelStartsNearLnVocab) {
  torch::manual_seed(1);
  Gpt m(gpt_tiny());
  torch::Tensor x = torch::randint(65, {8, 16}, torch::kLong);
  torch::Tensor y = torch::randint(65, {8, 16}, torch::kLong);
  double loss = m->loss(m->forward(x), y).item<double>();
  EXPECT_NEAR(loss, std::log(65.0), 0.15) << "loss " << loss << " vs ln(65) " << std::log(65.0);
}

TEST(GptAttention, FutureTokensDoNotChangeEarlierLogits) {
  torch::manual_seed(2);
  Gpt m(gpt_tiny());
  m->eval();
  torch::NoGradGuard ng;
  torch::Tensor x = torch::randint(65, {1, 16}, torch::kLong);
  torch::Tensor x2 = x.clone();
  x2.index_put_({0, torch::indexing::Slice(10, 16)}, 3);
  torch::Tensor a = m->forward(x), b = m->forward(x2);
  double diff_past = (a.slice(1, 0, 10) - b.slice(1, 0, 10)).abs().max().item<double>();
  double diff_future = (a.slice(1, 10, 16) - b.slice(1, 10, 16)).abs().max().item<double>();
  EXPECT_LT(diff_past, 1e-6) << "max |diff| at positions before the change";
  EXPECT_GT(diff_future, 1e-4);
}

TEST(GptAttention, FusedCoreMatchesTheManualOneInValueAndGradient) {
  GptOptions fused = gpt_tiny();
  fused.sdpa = true;
  torch::manual_seed(3);
  Gpt a(gpt_tiny());
  torch::manual_seed(3);
  Gpt b(fused);  // the same weights: same seed, same parameters
  torch::Tensor x = torch::randint(65, {4, 16}, torch::kLong);
  torch::Tensor y = torch::randint(65, {4, 16}, torch::kLong);
  torch::Tensor la = a->loss(a->forward(x), y), lb = b->loss(b->forward(x), y);
  EXPECT_NEAR(la.item<double>(), lb.item<double>(), 1e-5);
  la.backward();
  lb.backward();
  const auto pa = a->parameters(), pb = b->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_LT((pa[i].grad() - pb[i].grad()).abs().max().item<double>(), 1e-5) << "parameter " << i;
  }
}

TEST(GptInit, ResidualProjectionsUseScaledStd) {
  torch::manual_seed(3);
  GptOptions o = gpt_tiny();
  o.n_embd = 128;
  o.n_layer = 8;
  Gpt m(o);
  double std_proj = m->blocks[0]->mlp->c_proj->weight.std().item<double>();
  double std_fc = m->blocks[0]->mlp->c_fc->weight.std().item<double>();
  EXPECT_NEAR(std_fc, 0.02, 0.002);
  EXPECT_NEAR(std_proj, 0.02 / std::sqrt(16.0), 0.001);
}

TEST(GptCheckpointing, GradientsEqualPlainBackward) {
  auto grads = [](bool ckpt) {
    torch::manual_seed(4);
    GptOptions o = gpt_tiny();
    o.activation_checkpointing = ckpt;
    Gpt m(o);
    torch::manual_seed(5);
    torch::Tensor x = torch::randint(65, {4, 16}, torch::kLong);
    torch::Tensor y = torch::randint(65, {4, 16}, torch::kLong);
    m->loss(m->forward(x), y).backward();
    std::vector<torch::Tensor> g;
    for (auto& p : m->parameters()) g.push_back(p.grad().clone());
    return g;
  };
  auto plain = grads(false), ckpt = grads(true);
  ASSERT_EQ(plain.size(), ckpt.size());
  double max_diff = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    max_diff = std::max(max_diff, (plain[i] - ckpt[i]).abs().max().item<double>());
  }
  EXPECT_LT(max_diff, 1e-6) << "max |grad diff| " << max_diff;
}

TEST(GptFlops, ForwardFormulaMatchesHandCount) {
  GptShape s{2, 2, 32, 16, 65, true};
  // per layer 24*T*C^2 + 4*T^2*C = 24*16*1024 + 4*256*32; lm_head 2*T*C*V
  double expect = 2 * (24.0 * 16 * 1024 + 4.0 * 256 * 32) + 2.0 * 16 * 32 * 65;
  EXPECT_DOUBLE_EQ(gpt_forward_flops_per_sequence(s), expect);
  EXPECT_DOUBLE_EQ(gpt_train_flops_per_step(s, 4, 2, false), 8 * 3 * expect);
  double blocks = 2 * (24.0 * 16 * 1024 + 4.0 * 256 * 32);
  EXPECT_DOUBLE_EQ(gpt_train_flops_per_step(s, 1, 1, true), 3 * expect + blocks);
}

}  // namespace
}  // namespace llmprof::model
