#include "llmprof/model/distilbert.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "llmprof/model/autocast.h"
#include "llmprof/model/flops.h"
#include "llmprof/profile/scope.h"

namespace llmprof::model {
namespace {

using torch::indexing::Slice;

DistilBertOptions tiny(EncoderHead head, double dropout = 0.0) {
  DistilBertOptions o;
  o.n_layer = 2;
  o.n_head = 2;
  o.dim = 32;
  o.hidden_dim = 64;
  o.vocab_size = 100;
  o.max_positions = 16;
  o.dropout = dropout;
  o.attention_dropout = dropout;
  o.classifier_dropout = dropout;
  o.num_labels = 2;
  o.head = head;
  return o;
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(DistilBertShapes, BothHeads) {
  torch::manual_seed(30);
  DistilBert mlm(tiny(EncoderHead::kMaskedLm));
  torch::Tensor ids = torch::randint(100, {2, 16}, torch::kLong);
  torch::Tensor mask = torch::ones({2, 16}, torch::kLong);
  torch::Tensor h = mlm->encode(ids, mask);
  EXPECT_EQ(h.sizes(), (std::vector<int64_t>{2, 16, 32}));
  torch::Tensor pos = torch::randint(16, {2, 4}, torch::kLong);
  EXPECT_EQ(mlm->mlm_logits(h, pos).sizes(), (std::vector<int64_t>{2, 4, 100}));
  EXPECT_THROW(mlm->classify_logits(h), std::invalid_argument);

  DistilBert cls(tiny(EncoderHead::kClassify));
  torch::Tensor hc = cls->encode(ids, mask);
  EXPECT_EQ(cls->classify_logits(hc).sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_THROW(cls->mlm_logits(hc, pos), std::invalid_argument);
}

// bf16 autocast (train.precision=bf16): every LayerNorm, including the MLM head's after a bf16
// GELU, must accept bf16 input; logits stay within bf16 rounding of fp32.
TEST(DistilBertAutocast, Bf16ForwardOfBothHeadsIsCloseToFp32) {
  torch::manual_seed(31);
  torch::Tensor ids = torch::randint(100, {2, 16}, torch::kLong);
  torch::Tensor mask = torch::ones({2, 16}, torch::kLong);
  mask.index_put_({1, Slice(10, 16)}, 0);
  torch::Tensor pos = torch::randint(10, {2, 4}, torch::kLong);
  for (EncoderHead head : {EncoderHead::kMaskedLm, EncoderHead::kClassify}) {
    DistilBert m(tiny(head));
    m->eval();
    torch::NoGradGuard no_grad;
    auto run = [&] {
      torch::Tensor h = m->encode(ids, mask);
      return head == EncoderHead::kMaskedLm ? m->mlm_logits(h, pos) : m->classify_logits(h);
    };
    const torch::Tensor fp32 = run();
    torch::Tensor bf16;
    {
      CpuAutocastScope autocast(true);
      bf16 = run().to(torch::kFloat);
    }
    const double diff = max_abs_diff(bf16, fp32), scale = fp32.abs().max().item<double>();
    std::printf("bf16 vs fp32 logits: max abs diff %.4g (max |fp32| %.4g)\n", diff, scale);
    EXPECT_LT(diff, 0.05 * scale + 0.02);  // bf16 keeps 8 mantissa bits: ~0.4% per op
  }
}

TEST(DistilBertMask, PaddedPositionsDoNotChangeRealOnes) {
  torch::manual_seed(31);
  DistilBert m(tiny(EncoderHead::kMaskedLm, 0.1));
  m->eval();
  torch::NoGradGuard ng;
  // Row 0: 10 real tokens, then 6 pads of arbitrary ids; row 1: 16 real tokens.
  torch::Tensor ids = torch::randint(100, {2, 16}, torch::kLong);
  torch::Tensor mask = torch::ones({2, 16}, torch::kLong);
  mask.index_put_({0, Slice(10, 16)}, 0);
  torch::Tensor padded = m->encode(ids, mask).index({0, Slice(0, 10)});
  torch::Tensor alone =
      m->encode(ids.index({Slice(0, 1), Slice(0, 10)}), torch::ones({1, 10}, torch::kLong))[0];
  const double diff_unpadded = max_abs_diff(padded, alone);

  torch::Tensor ids2 = ids.clone();
  ids2.index_put_({0, Slice(10, 16)}, torch::randint(100, {6}, torch::kLong));
  const double diff_pad_ids = max_abs_diff(padded, m->encode(ids2, mask).index({0, Slice(0, 10)}));
  std::printf("[distilbert mask] max |padded - unpadded| = %.3g, after changing pad ids = %.3g\n",
              diff_unpadded, diff_pad_ids);
  EXPECT_LT(diff_unpadded, 1e-5);
  EXPECT_LT(diff_pad_ids, 1e-5);
  // Without the mask the pads do leak in: the check above is not vacuous.
  torch::Tensor unmasked =
      m->encode(ids, torch::ones({2, 16}, torch::kLong)).index({0, Slice(0, 10)});
  EXPECT_GT(max_abs_diff(padded, unmasked), 1e-4);
}

TEST(DistilBertDropout, EvalIsDeterministicTrainIsNot) {
  torch::manual_seed(32);
  DistilBert m(tiny(EncoderHead::kClassify, 0.1));
  torch::Tensor ids = torch::randint(100, {2, 16}, torch::kLong);
  torch::Tensor mask = torch::ones({2, 16}, torch::kLong);
  m->eval();
  torch::Tensor a = m->classify_logits(m->encode(ids, mask));
  torch::Tensor b = m->classify_logits(m->encode(ids, mask));
  EXPECT_TRUE(torch::equal(a, b));
  m->train();
  torch::Tensor c = m->encode(ids, mask), d = m->encode(ids, mask);
  EXPECT_FALSE(torch::equal(c, d)) << "dropout 0.1 in train mode must change the output";
}

TEST(DistilBertLoss, IgnoresMinus100Labels) {
  torch::manual_seed(33);
  DistilBert m(tiny(EncoderHead::kMaskedLm));
  torch::Tensor logits = torch::randn({2, 3, 7});
  torch::Tensor labels = torch::tensor({1, -100, 4, -100, 6, 0}, torch::kLong).view({2, 3});
  // Hand: mean of -log_softmax at the 4 labelled entries.
  torch::Tensor flat = torch::log_softmax(logits.view({6, 7}), -1);
  const double expect = -(flat[0][1] + flat[2][4] + flat[4][6] + flat[5][0]).item<double>() / 4;
  EXPECT_NEAR(m->loss(logits, labels).item<double>(), expect, 1e-6);
  torch::Tensor changed = logits.clone();
  changed.index_put_({0, 1}, 50.0);  // an ignored entry
  EXPECT_NEAR(m->loss(changed, labels).item<double>(), expect, 1e-6);
}

TEST(DistilBertParameters, CountTiedWeightOnceAndMatchClosedForm) {
  torch::manual_seed(34);
  DistilBert mlm(tiny(EncoderHead::kMaskedLm));
  DistilBert cls(tiny(EncoderHead::kClassify));
  // embeddings 3200 + 512 + 64; per layer 8544; MLM head 1220; classify head 1122.
  EXPECT_EQ(mlm->num_parameters(), 3776 + 2 * 8544 + 1220);
  EXPECT_EQ(cls->num_parameters(), 3776 + 2 * 8544 + 1122);
  EXPECT_EQ(mlm->num_parameters(), encoder_parameter_count({2, 2, 32, 64, 16, 100, 16, 2, 4}));
  EXPECT_EQ(cls->num_parameters(), encoder_parameter_count({2, 2, 32, 64, 16, 100, 16, 2, 0}));
}

TEST(DistilBertParameters, NamesFollowHuggingFace) {
  auto names = [](const DistilBert& m) {
    std::set<std::string> out;
    for (const auto& kv : m->named_parameters()) out.insert(kv.key());
    return out;
  };
  const auto mlm = names(DistilBert(tiny(EncoderHead::kMaskedLm)));
  for (const char* n :
       {"word_embeddings.weight", "position_embeddings.weight", "emb_layer_norm.weight",
        "emb_layer_norm.bias", "layers.0.attention.qkv_lin.weight",
        "layers.0.attention.qkv_lin.bias", "layers.0.attention.out_lin.weight",
        "layers.0.sa_layer_norm.weight", "layers.1.ffn.lin1.weight", "layers.1.ffn.lin2.bias",
        "layers.1.output_layer_norm.bias", "vocab_transform.weight", "vocab_layer_norm.weight",
        "vocab_projector_bias"}) {
    EXPECT_EQ(mlm.count(n), 1u) << n;
  }
  EXPECT_EQ(mlm.size(), 4u + 2 * 12 + 5) << "no separate projector weight (tied)";
  const auto cls = names(DistilBert(tiny(EncoderHead::kClassify)));
  for (const char* n :
       {"pre_classifier.weight", "pre_classifier.bias", "classifier.weight", "classifier.bias"}) {
    EXPECT_EQ(cls.count(n), 1u) << n;
  }
  EXPECT_EQ(cls.count("vocab_projector_bias"), 0u);
  EXPECT_EQ(cls.count("vocab_transform.weight"), 0u);
}

TEST(DistilBertTraining, MaskedLmLossFallsOnARepeatingPattern) {
  torch::manual_seed(35);
  DistilBert m(tiny(EncoderHead::kMaskedLm));
  torch::optim::AdamW opt(m->parameters(), torch::optim::AdamWOptions(1e-2).weight_decay(0.0));
  const int64_t B = 16, T = 16, P = 3, kMaskId = 1;
  // Rows are 5 + (i + offset) % 7: every masked token is predictable from its neighbours.
  auto batch = [&](torch::Tensor& ids, torch::Tensor& pos, torch::Tensor& labels) {
    torch::Tensor offset = torch::randint(7, {B, 1}, torch::kLong);
    ids = (torch::arange(T, torch::kLong).unsqueeze(0) + offset).remainder(7) + 5;
    pos = torch::stack(
        {torch::randint(0, 5, {B}, torch::kLong), torch::randint(5, 10, {B}, torch::kLong),
         torch::randint(10, 16, {B}, torch::kLong)},
        1);  // (B,P), distinct
    labels = ids.gather(1, pos);
    ids.scatter_(1, pos, kMaskId);
  };
  torch::Tensor mask = torch::ones({B, T}, torch::kLong);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    torch::Tensor ids, pos, labels;
    batch(ids, pos, labels);
    ASSERT_EQ(pos.size(1), P);
    opt.zero_grad();
    torch::Tensor loss = m->loss(m->mlm_logits(m->encode(ids, mask), pos), labels);
    loss.backward();
    opt.step();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  std::printf("[distilbert mlm] loss %.3f -> %.3f over 60 steps\n", first, last);
  EXPECT_NEAR(first, std::log(100.0), 0.3);
  EXPECT_LT(last, 0.5 * first);  // ~ln 7 = 1.95 after 60 steps: the 7 pattern tokens learned
}

TEST(DistilBertScopes, EmitsTheDecoderScopeNames) {
  torch::manual_seed(36);
  DistilBert m(tiny(EncoderHead::kMaskedLm));
  torch::Tensor ids = torch::randint(100, {2, 16}, torch::kLong);
  torch::Tensor mask = torch::ones({2, 16}, torch::kLong);
  torch::Tensor pos = torch::randint(16, {2, 4}, torch::kLong);
  torch::Tensor labels = torch::randint(100, {2, 4}, torch::kLong);
  profile::ScopeRecorder r(1024, [] { return int64_t{0}; });
  profile::set_active_scope_recorder(&r);
  m->loss(m->mlm_logits(m->encode(ids, mask), pos), labels);
  profile::set_active_scope_recorder(nullptr);
  ASSERT_EQ(r.dropped(), 0);

  using profile::Scope;
  std::map<Scope, int> count;
  const auto& ev = r.events();
  for (const auto& e : ev) {
    const auto s = static_cast<Scope>(e.scope);
    ++count[s];
    const bool in_block = s != Scope::kEmbedding && s != Scope::kLmHead && s != Scope::kLoss;
    EXPECT_EQ(e.block >= 0, in_block) << profile::scope_name(s);
    // Each scope nests in its structural parent (attn.scores in attn.core in attn in block).
    const int parent = profile::parent_scope(s);
    if (parent >= 0) {
      ASSERT_GE(e.parent, 0) << profile::scope_name(s);
      EXPECT_EQ(ev[static_cast<size_t>(e.parent)].scope, parent) << profile::scope_name(s);
      EXPECT_EQ(ev[static_cast<size_t>(e.parent)].block, e.block);
    }
  }
  for (Scope s : {Scope::kBlock, Scope::kLn1, Scope::kAttn, Scope::kAttnQkv, Scope::kAttnCore,
                  Scope::kAttnScores, Scope::kAttnSoftmax, Scope::kAttnMix, Scope::kAttnProj,
                  Scope::kLn2, Scope::kMlp, Scope::kMlpUp, Scope::kMlpAct, Scope::kMlpDown}) {
    EXPECT_EQ(count[s], 2) << profile::scope_name(s) << " once per layer";
  }
  EXPECT_EQ(count[Scope::kEmbedding], 1);
  EXPECT_EQ(count[Scope::kLmHead], 1);
  EXPECT_EQ(count[Scope::kLoss], 1);
  EXPECT_EQ(count[Scope::kLnF], 0) << "the encoder has no final LayerNorm";
}

}  // namespace
}  // namespace llmprof::model
