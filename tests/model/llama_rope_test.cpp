// The rotary embedding (the relative-position property, the rotation against pairs rotated by hand,
// llama3 rope_scaling against hand-computed frequencies) and the llama FLOPs model.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "llmprof/model/flops.h"
#include "llmprof/model/llama.h"

namespace llmprof::model {
namespace {

LlamaOptions rope_opts(int64_t hd, int64_t T) {
  LlamaOptions o;
  o.n_layer = 1;
  o.n_head = 1;
  o.n_embd = hd;
  o.block_size = T;
  o.vocab_size = 8;
  return o;
}

// x (hd,) at position p -> rotated (hd,) through the model's tables and apply_rope.
torch::Tensor rotated(const Llama& m, const torch::Tensor& x, int64_t p) {
  const int64_t hd = x.size(0);
  torch::Tensor xs = x.view({1, 1, 1, hd});  // (B, T, n, hd)
  torch::Tensor c = m->rope_cos.slice(0, p, p + 1).unsqueeze(1);
  torch::Tensor s = m->rope_sin.slice(0, p, p + 1).unsqueeze(1);
  return apply_rope(xs, c, s).view({hd});
}

TEST(LlamaRope, QueryKeyDotDependsOnlyOnTheOffset) {
  torch::manual_seed(7);
  Llama m(rope_opts(16, 64));
  torch::Tensor q = torch::randn({16}, torch::kDouble).to(torch::kFloat);
  torch::Tensor k = torch::randn({16}, torch::kDouble).to(torch::kFloat);
  double worst = 0;
  for (int64_t offset : {0, 1, 5, 17}) {
    const double ref = rotated(m, q, offset).dot(rotated(m, k, 0)).item<double>();
    for (int64_t n : {3, 11, 40}) {
      if (n + offset >= 64) continue;
      const double d = rotated(m, q, n + offset).dot(rotated(m, k, n)).item<double>();
      worst = std::max(worst, std::abs(d - ref));
    }
  }
  std::printf("[rope] max |q_m.k_n - q_(m-n).k_0| = %.3g\n", worst);
  EXPECT_LT(worst, 1e-4);
  // Not a constant: another offset gives another product.
  const double a = rotated(m, q, 1).dot(rotated(m, k, 0)).item<double>();
  const double b = rotated(m, q, 9).dot(rotated(m, k, 0)).item<double>();
  EXPECT_GT(std::abs(a - b), 1e-3);
}

TEST(LlamaRope, RotatesEachHalfPairByPositionTimesFrequency) {
  // hd = 4, theta = 100: inv_freq = [1, 1/10]. Pair i is (x_i, x_{i+2}) rotated by p * inv_freq_i:
  // (x_i cos a - x_{i+2} sin a, x_{i+2} cos a + x_i sin a) (rotate_half convention).
  LlamaOptions o = rope_opts(4, 8);
  o.rope_theta = 100.0;
  Llama m(o);
  torch::Tensor x = torch::tensor({1.0f, 2.0f, 3.0f, 4.0f});
  torch::Tensor y = rotated(m, x, 3);
  const double a0 = 3 * 1.0, a1 = 3 * 0.1;
  const std::vector<double> want = {1 * std::cos(a0) - 3 * std::sin(a0),
                                    2 * std::cos(a1) - 4 * std::sin(a1),
                                    3 * std::cos(a0) + 1 * std::sin(a0),
                                    4 * std::cos(a1) + 2 * std::sin(a1)};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i].item<double>(), want[i], 1e-5) << i;
}

TEST(LlamaRope, GradientIsTheInverseRotation) {
  // Each pair is rotated by an orthogonal 2x2 R(a): the gradient of sum(R x * w) is R(a)^T w =
  // R(-a) w, i.e. apply_rope(w, cos, -sin).
  torch::manual_seed(8);
  torch::Tensor x = torch::randn({2, 5, 3, 8}, torch::kDouble).requires_grad_(true);
  torch::Tensor w = torch::randn({2, 5, 3, 8}, torch::kDouble);
  torch::Tensor ang = torch::rand({5, 1, 8}, torch::kDouble) * 6;
  ang.narrow(-1, 4, 4).copy_(ang.narrow(-1, 0, 4));  // equal halves, as the tables have
  (apply_rope(x, ang.cos(), ang.sin()) * w).sum().backward();
  const double d = (x.grad() - apply_rope(w, ang.cos(), -ang.sin())).abs().max().item<double>();
  EXPECT_LT(d, 1e-12);
}

TEST(LlamaRope, Llama3ScalingMatchesHandComputedFrequencies) {
  // hd = 8, theta = 1e4: inv_freq = [1, 0.1, 0.01, 0.001], wavelengths 2 pi / f =
  // [6.28, 62.8, 628.3, 6283]. original 1000, low 1, high 4: low_wavelen 1000, high_wavelen 250.
  //   6.28, 62.8 < 250: kept.  6283 > 1000: 0.001 / 8 = 1.25e-4.
  //   628.3 between: smooth = (1000 / 628.3 - 1) / (4 - 1) = (10 / (2 pi) - 1) / 3 = 0.19718314;
  //   f = (1 - smooth) * 0.01 / 8 + smooth * 0.01 = 0.0029753525.
  LlamaOptions o = rope_opts(8, 8);
  o.rope_llama3 = true;
  o.rope_factor = 8;
  o.rope_low_freq_factor = 1;
  o.rope_high_freq_factor = 4;
  o.rope_original_max_positions = 1000;
  const std::vector<double> f = rope_inv_freq(o);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_NEAR(f[0], 1.0, 1e-12);
  EXPECT_NEAR(f[1], 0.1, 1e-12);
  EXPECT_NEAR(f[2], 0.0029753525, 1e-10);
  EXPECT_NEAR(f[3], 1.25e-4, 1e-12);
  // The tables use them: angle at position 5 of column 2 is 5 * f[2].
  Llama m(o);
  EXPECT_NEAR(m->rope_cos[5][2].item<double>(), std::cos(5 * 0.0029753525), 1e-6);
  EXPECT_NEAR(m->rope_sin[5][6].item<double>(), std::sin(5 * 0.0029753525), 1e-6);
  o.rope_llama3 = false;
  EXPECT_NEAR(rope_inv_freq(o)[2], 0.01, 1e-12);
}

TEST(LlamaFlops, ForwardAndScopesMatchHandCount) {
  // L=2, nh=4, nkv=2, C=32, hd=8, F=48, T=16, V=40:
  //   per layer q 2*16*32*32 = 32768, k = v = 2*16*32*16 = 16384, o 32768,
  //   gate = up = down = 2*16*32*48 = 49152, scores = mix = 2*16*16*32 = 16384;
  //   block = 32768 + 2*16384 + 32768 + 3*49152 + 2*16384 = 278528;
  //   lm_head 2*16*32*40 = 40960; forward = 2*278528 + 40960 = 598016.
  LlamaShape s{2, 4, 2, 32, 8, 48, 16, 40, false, false};
  EXPECT_DOUBLE_EQ(llama_forward_flops_per_sequence(s), 598016.0);
  EXPECT_DOUBLE_EQ(llama_train_flops_per_step(s, 3, 2, false), 6 * 3 * 598016.0);
  EXPECT_DOUBLE_EQ(llama_train_flops_per_step(s, 1, 1, true), 3 * 598016.0 + 2 * 278528.0);
  const profile::ScopeFlops f = llama_scope_forward_flops(s, 3);
  auto at = [&](profile::Scope sc) { return f[static_cast<size_t>(sc)]; };
  EXPECT_DOUBLE_EQ(at(profile::Scope::kAttnK), 3 * 16384.0);
  EXPECT_DOUBLE_EQ(at(profile::Scope::kMlpGate), 3 * 49152.0);
  EXPECT_DOUBLE_EQ(at(profile::Scope::kBlock), 3 * 278528.0);
  EXPECT_DOUBLE_EQ(2 * at(profile::Scope::kBlock) + at(profile::Scope::kLmHead),
                   3 * llama_forward_flops_per_sequence(s));
  EXPECT_EQ(at(profile::Scope::kNorm), -1) << "RMSNorm not modelled";
  EXPECT_EQ(at(profile::Scope::kAttnQkv), -1) << "no fused qkv in llama";
}

TEST(LlamaFlops, GqaSavingsAgainstMhaOfTheSameWidth) {
  // SmolLM2-135M: L=30, nh=9, nkv=3, hd=64, C=576, T=256. KV bf16: 30*2*3*64*2 = 23040 B/token,
  // MHA 69120. k/v projections per token: 30 * 2 * 2*576*192 = 13271040 vs 30 * 2 * 2*576*576.
  LlamaShape s{30, 9, 3, 576, 64, 1536, 256, 49152, true, false};
  // Parameters: 49152*576 + 30 * (2*576*576 + 2*576*192 + 3*576*1536 + 2*576) + 576, tied.
  EXPECT_EQ(llama_parameter_count(s), 134515008);  // SmolLM2-135M's published 134,515,008
  const GqaSavings g = llama_gqa_savings(s, 2);
  EXPECT_EQ(g.kv_bytes_per_token, 23040);
  EXPECT_EQ(g.mha_kv_bytes_per_token, 69120);
  EXPECT_DOUBLE_EQ(g.kv_proj_flops_per_token, 13271040.0);
  EXPECT_DOUBLE_EQ(g.mha_kv_proj_flops_per_token, 3 * 13271040.0);
  // Attention per token: q + o 2 * 2*576*576 + k/v + core 4*T*576, times 30 layers.
  const double common = 30 * (2 * 2.0 * 576 * 576 + 4.0 * 256 * 576);
  EXPECT_DOUBLE_EQ(g.attention_flops_per_token, common + 13271040.0);
  EXPECT_DOUBLE_EQ(g.mha_attention_flops_per_token, common + 3 * 13271040.0);
}

}  // namespace
}  // namespace llmprof::model
