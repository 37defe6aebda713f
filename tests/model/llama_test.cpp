// The Llama-family decoder: parameter names and shapes (Hugging Face's), tied embeddings, RMSNorm,
// grouped-query attention against MHA with repeated k/v weights, manual vs fused attention in value
// and gradient, activation checkpointing, KV-cache decode against the full forward.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmprof/model/autocast.h"
#include "llmprof/model/flops.h"
#include "llmprof/model/llama.h"

namespace llmprof::model {
namespace {

using torch::indexing::Slice;

LlamaOptions llama_tiny(int64_t kv_heads = 2) {
  LlamaOptions o;
  o.n_layer = 2;
  o.n_head = 4;
  o.n_kv_head = kv_heads;
  o.n_embd = 32;
  o.intermediate_size = 48;
  o.block_size = 16;
  o.vocab_size = 40;
  o.rope_theta = 10000.0;
  return o;
}

double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

TEST(Llama, ParameterNamesAndShapesAreHuggingFacesWithoutModelPrefix) {
  LlamaOptions o = llama_tiny();
  o.attention_bias = true;
  Llama m(o);
  std::map<std::string, std::vector<int64_t>> got;
  for (const auto& p : m->named_parameters()) got[p.key()] = p.value().sizes().vec();
  std::map<std::string, std::vector<int64_t>> want = {{"embed_tokens.weight", {40, 32}},
                                                      {"norm.weight", {32}},
                                                      {"lm_head.weight", {40, 32}}};
  for (int i = 0; i < 2; ++i) {
    const std::string l = "layers." + std::to_string(i) + ".";
    // q (nh*hd, C) = (4*8, 32); k, v (nkv*hd, C) = (2*8, 32); o (C, nh*hd).
    want[l + "self_attn.q_proj.weight"] = {32, 32};
    want[l + "self_attn.q_proj.bias"] = {32};
    want[l + "self_attn.k_proj.weight"] = {16, 32};
    want[l + "self_attn.k_proj.bias"] = {16};
    want[l + "self_attn.v_proj.weight"] = {16, 32};
    want[l + "self_attn.v_proj.bias"] = {16};
    want[l + "self_attn.o_proj.weight"] = {32, 32};
    want[l + "mlp.gate_proj.weight"] = {48, 32};
    want[l + "mlp.up_proj.weight"] = {48, 32};
    want[l + "mlp.down_proj.weight"] = {32, 48};
    want[l + "input_layernorm.weight"] = {32};
    want[l + "post_attention_layernorm.weight"] = {32};
  }
  EXPECT_EQ(got, want);
  // Hand count: 40*32 embed + 2 * (32*32 + 2*16*32 + 32*32 + (32+16+16) + 3*32*48 + 2*32)
  //             + 32 norm + 40*32 head = 1280 + 2 * 7808 + 32 + 1280 = 18208.
  EXPECT_EQ(m->num_parameters(), 18208);
  LlamaShape s{2, 4, 2, 32, 8, 48, 16, 40, false, true};
  EXPECT_EQ(llama_parameter_count(s), 18208);
}

TEST(Llama, TiedEmbeddingsShareTheEmbeddingStorage) {
  LlamaOptions o = llama_tiny();
  o.tie_embeddings = true;
  Llama m(o);
  for (const auto& p : m->named_parameters()) EXPECT_NE(p.key(), "lm_head.weight");
  EXPECT_EQ(m->num_parameters(), 18208 - 1280 - 2 * (32 + 16 + 16));  // no head, no biases
  // The head is the embedding: changing one embedding row changes that vocabulary logit.
  m->eval();
  torch::NoGradGuard ng;
  torch::Tensor x = torch::tensor({1, 2, 3, 4, 5}, torch::kLong).view({1, 5});
  torch::Tensor before = m->forward(x);
  const int64_t row = 7;  // not an input token: only its logit column can move
  m->embed_tokens->weight[row].add_(0.5);
  torch::Tensor after = m->forward(x);
  torch::Tensor d = (after - before).abs().amax({0, 1});  // (V,)
  EXPECT_GT(d[row].item<double>(), 1e-3);
  d[row] = 0;
  EXPECT_LT(d.max().item<double>(), 1e-6);
  // Gradient flows into the one shared tensor from both uses.
  torch::GradMode::set_enabled(true);
  m->train();
  torch::Tensor loss = m->loss(m->forward(x), x);
  loss.backward();
  EXPECT_TRUE(m->embed_tokens->weight.grad().defined());
  EXPECT_GT(m->embed_tokens->weight.grad()[row].abs().sum().item<double>(), 0) << "head gradient";
  torch::GradMode::set_enabled(false);
}

TEST(Llama, RmsNormMatchesHandComputation) {
  // x = [1, 2, 3, 4]: mean(x^2) = 30/4 = 7.5; y = w * x / sqrt(7.5 + eps).
  RmsNorm n(4, 1e-5);
  {
    torch::NoGradGuard ng;
    n->weight.copy_(torch::tensor({1.0f, 0.5f, 2.0f, -1.0f}));
  }
  torch::Tensor y = n(torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({1, 4}));
  const double r = 1.0 / std::sqrt(7.5 + 1e-5);
  const std::vector<double> want = {1 * r, 0.5 * 2 * r, 2 * 3 * r, -1 * 4 * r};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[0][i].item<double>(), want[i], 1e-6) << i;
  // bf16 input: normalised in fp32, cast to bf16 before the (fp32) weight.
  torch::Tensor yb = n(torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({1, 4}).to(torch::kBFloat16));
  EXPECT_EQ(yb.scalar_type(), torch::kFloat);  // weight fp32 * bf16 promotes, as in PyTorch
  EXPECT_NEAR(yb[0][2].item<double>(), 2 * 3 * r, 2e-2);
}

TEST(Llama, KvHeadsNotDividingHeadsIsAnError) {
  LlamaOptions o = llama_tiny(3);  // 3 does not divide 4
  try {
    Llama m(o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("n_kv_head 3 does not divide n_head 4"),
              std::string::npos)
        << e.what();
  }
}

// Copies the GQA model's weights into an MHA model, each kv head's k/v rows repeated for the g
// query heads that read it (query head h reads kv head h / g).
void copy_repeating_kv(Llama& gqa, Llama& mha, int64_t g, int64_t hd) {
  torch::NoGradGuard ng;
  auto src = gqa->named_parameters();
  for (auto& p : mha->named_parameters()) {
    const std::string& name = p.key();
    const torch::Tensor& s = src[name];
    const bool kv = name.find("k_proj") != std::string::npos ||
                    name.find("v_proj") != std::string::npos;
    if (!kv) {
      p.value().copy_(s);
      continue;
    }
    // s (nkv*hd, C) -> (nkv, 1, hd, C) -> (nkv, g, hd, C) -> (nh*hd, C)
    std::vector<int64_t> shape = s.sizes().vec();
    shape[0] = s.size(0) / hd;
    shape.insert(shape.begin() + 1, hd);
    torch::Tensor r = s.view(shape).unsqueeze(1).repeat_interleave(g, 1);
    p.value().copy_(r.reshape(p.value().sizes()));
  }
}

TEST(Llama, GroupedQueryEqualsMultiHeadWithRepeatedKvWeights) {
  torch::manual_seed(1);
  LlamaOptions o = llama_tiny(2);
  o.attention_bias = true;
  Llama gqa(o);
  {
    torch::NoGradGuard ng;
    for (auto& p : gqa->named_parameters()) {
      if (p.key().find("bias") != std::string::npos) p.value().normal_(0, 0.1);
    }
  }
  LlamaOptions om = o;
  om.n_kv_head = 4;
  Llama mha(om);
  copy_repeating_kv(gqa, mha, /*g=*/2, /*hd=*/8);
  torch::NoGradGuard ng;
  torch::Tensor x = torch::randint(40, {2, 16}, torch::kLong);
  const double d = max_diff(gqa->forward(x), mha->forward(x));
  std::printf("[gqa vs mha] max |logits diff| = %.3g\n", d);
  EXPECT_LT(d, 1e-5);
  // And the MHA model with different (unrepeated) k weights differs: the test can fail.
  mha->layers->ptr<LlamaBlockImpl>(0)->self_attn->k_proj->weight.add_(0.1);
  EXPECT_GT(max_diff(gqa->forward(x), mha->forward(x)), 1e-4);
}

TEST(Llama, ManualAndFusedAttentionAgreeInValueAndGradient) {
  for (int64_t kv : {4, 2, 1}) {
    torch::manual_seed(2);
    LlamaOptions o = llama_tiny(kv);
    Llama manual(o);
    o.sdpa = true;
    torch::manual_seed(2);
    Llama fused(o);
    torch::Tensor x = torch::randint(40, {2, 16}, torch::kLong);
    torch::Tensor lm = manual->forward(x), lf = fused->forward(x);
    EXPECT_LT(max_diff(lm, lf), 1e-5) << "kv heads " << kv;
    manual->loss(lm, x).backward();
    fused->loss(lf, x).backward();
    auto pm = manual->named_parameters();
    double worst = 0;
    for (auto& p : fused->named_parameters()) {
      worst = std::max(worst, max_diff(p.value().grad(), pm[p.key()].grad()));
    }
    std::printf("[manual vs sdpa] kv=%lld max |grad diff| = %.3g\n", static_cast<long long>(kv),
                worst);
    EXPECT_LT(worst, 1e-5) << "kv heads " << kv;
  }
}

TEST(Llama, ActivationCheckpointingKeepsLossAndGradients) {
  torch::manual_seed(3);
  LlamaOptions o = llama_tiny();
  Llama plain(o);
  o.activation_checkpointing = true;
  torch::manual_seed(3);
  Llama ckpt(o);
  torch::Tensor x = torch::randint(40, {2, 16}, torch::kLong);
  torch::Tensor a = plain->loss(plain->forward(x), x), b = ckpt->loss(ckpt->forward(x), x);
  EXPECT_EQ(a.item<float>(), b.item<float>());
  a.backward();
  b.backward();
  auto pp = plain->named_parameters();
  for (auto& p : ckpt->named_parameters()) {
    EXPECT_LT(max_diff(p.value().grad(), pp[p.key()].grad()), 1e-6) << p.key();
  }
}

TEST(Llama, KvCacheDecodeMatchesFullForward) {
  torch::manual_seed(4);
  Llama m(llama_tiny(2));
  m->eval();
  torch::NoGradGuard ng;
  torch::Tensor x = torch::randint(40, {2, 16}, torch::kLong);
  torch::Tensor full = m->forward(x);  // (2, 16, 40)
  KvCache cache = m->make_cache(2, 16);
  EXPECT_EQ(cache.k[0].sizes(), (std::vector<int64_t>{2, 2, 16, 8})) << "nkv heads cached";
  torch::Tensor prefill = m->forward_cached(x.index({Slice(), Slice(0, 9)}), cache);
  double d = max_diff(prefill, full.index({Slice(), Slice(0, 9)}));
  for (int64_t t = 9; t < 16; ++t) {
    torch::Tensor step = m->forward_cached(x.index({Slice(), Slice(t, t + 1)}), cache);
    d = std::max(d, max_diff(step, full.index({Slice(), Slice(t, t + 1)})));
  }
  std::printf("[llama kv cache] max |cached - full| = %.3g\n", d);
  EXPECT_LT(d, 1e-5);
  EXPECT_EQ(cache.length, 16);
  // Bytes per token: 2 layers * 2 (k, v) * 2 kv heads * 8 wide * 4 bytes; MHA would hold 4 heads.
  EXPECT_EQ(m->kv_bytes_per_token(4), 256);
  EXPECT_THROW(m->forward_cached(x.index({Slice(), Slice(0, 1)}), cache), std::invalid_argument);
}

TEST(Llama, Bf16AutocastKeepsRopeTablesFp32AndTracksFp32) {
  torch::manual_seed(5);
  Llama m(llama_tiny(2));
  torch::Tensor x = torch::randint(40, {2, 16}, torch::kLong);
  torch::Tensor ref = m->forward(x);
  torch::Tensor bf;
  {
    AutocastScope autocast(at::kCPU, at::kBFloat16, true);
    bf = m->forward(x);
  }
  EXPECT_EQ(m->rope_cos.scalar_type(), torch::kFloat);
  const double d = max_diff(bf, ref);
  std::printf("[bf16 autocast] max |logits - fp32| = %.3g\n", d);
  EXPECT_LT(d, 0.1);
}

}  // namespace
}  // namespace llmprof::model
