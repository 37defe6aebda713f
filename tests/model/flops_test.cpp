#include "llmprof/model/flops.h"

#include <gtest/gtest.h>

#include "llmprof/profile/scope.h"

namespace llmprof::model {
namespace {

using profile::Scope;

double at(const profile::ScopeFlops& f, Scope s) {
  return f[static_cast<int>(s)];
}

// L=2, nh=2, C=32, F=64, T=16, V=100, 16 positions, 2 labels; P=4 masked positions (MLM).
EncoderShape tiny_encoder(int64_t mlm_predictions) {
  return EncoderShape{2, 2, 32, 64, 16, 100, 16, 2, mlm_predictions};
}

TEST(EncoderParameters, MatchHandCount) {
  // embeddings 100*32 + 16*32 + 64 = 3776; per layer qkv 3168 + out 1056 + lin1 2112 +
  // lin2 2080 + 2 LayerNorms 128 = 8544; MLM head 1024+32 + 64 + 100 = 1220;
  // classify head 1024+32 + 64+2 = 1122.
  EXPECT_EQ(encoder_parameter_count(tiny_encoder(4)), 3776 + 2 * 8544 + 1220);
  EXPECT_EQ(encoder_parameter_count(tiny_encoder(0)), 3776 + 2 * 8544 + 1122);
}

TEST(EncoderFlops, ForwardAndTrainMatchHandCount) {
  // per layer: qkv 2*16*32*96 = 98304, out 2*16*32*32 = 32768, FFN 2*16*32*64*2 = 131072,
  // scores + mix 4*16*16*32 = 32768 -> 294912.
  const double layers = 2 * 294912.0;
  // MLM head at P=4: 2*4*32*32 + 2*4*32*100 = 8192 + 25600; classify: 2*32*32 + 2*32*2.
  EXPECT_DOUBLE_EQ(encoder_forward_flops_per_sequence(tiny_encoder(4)), layers + 33792.0);
  EXPECT_DOUBLE_EQ(encoder_forward_flops_per_sequence(tiny_encoder(0)), layers + 2176.0);
  EXPECT_DOUBLE_EQ(encoder_train_flops_per_step(tiny_encoder(4), 4, 2),
                   4 * 2 * 3 * (layers + 33792.0));
}

TEST(EncoderScopeFlops, LayersPlusHeadSumToForwardTimesBatch) {
  for (int64_t p : {4, 0}) {
    const EncoderShape s = tiny_encoder(p);
    const int64_t B = 3;
    const auto f = encoder_scope_forward_flops(s, B);
    EXPECT_DOUBLE_EQ(at(f, Scope::kAttnQkv), 3 * 98304.0);
    EXPECT_DOUBLE_EQ(at(f, Scope::kAttnScores), 3 * 2 * 16 * 16 * 32.0);
    EXPECT_DOUBLE_EQ(at(f, Scope::kAttnCore), 3 * 32768.0);
    EXPECT_DOUBLE_EQ(at(f, Scope::kAttnProj), 3 * 32768.0);
    EXPECT_DOUBLE_EQ(at(f, Scope::kMlpUp), 3 * 65536.0);
    EXPECT_DOUBLE_EQ(at(f, Scope::kMlp), 3 * 131072.0);
    EXPECT_DOUBLE_EQ(at(f, Scope::kBlock), 3 * 294912.0);
    EXPECT_DOUBLE_EQ(at(f, Scope::kAttn),
                     at(f, Scope::kAttnQkv) + at(f, Scope::kAttnCore) + at(f, Scope::kAttnProj));
    EXPECT_DOUBLE_EQ(at(f, Scope::kLmHead), 3 * (p > 0 ? 33792.0 : 2176.0));
    EXPECT_DOUBLE_EQ(s.n_layer * at(f, Scope::kBlock) + at(f, Scope::kLmHead),
                     encoder_forward_flops_per_sequence(s) * B);
    for (Scope u : {Scope::kEmbedding, Scope::kLn1, Scope::kAttnSoftmax, Scope::kLn2,
                    Scope::kMlpAct, Scope::kLnF, Scope::kLoss}) {
      EXPECT_EQ(at(f, u), -1) << "scope " << profile::scope_name(u) << " is not modelled";
    }
  }
}

TEST(GptScopeFlops, LayersPlusHeadSumToForwardTimesBatch) {
  const GptShape s{2, 2, 32, 16, 65, true};
  const auto f = gpt_scope_forward_flops(s, 2);
  // B=2, T=16, C=32: qkv 2*2*16*32*96, mlp.up 2*2*16*32*128, lm_head 2*2*16*32*65.
  EXPECT_DOUBLE_EQ(at(f, Scope::kAttnQkv), 196608.0);
  EXPECT_DOUBLE_EQ(at(f, Scope::kMlpUp), 262144.0);
  EXPECT_DOUBLE_EQ(at(f, Scope::kMlpDown), 262144.0);
  EXPECT_DOUBLE_EQ(at(f, Scope::kAttnMix), 2 * 2 * 16 * 16 * 32.0);
  EXPECT_DOUBLE_EQ(at(f, Scope::kLmHead), 133120.0);
  EXPECT_EQ(at(f, Scope::kEmbedding), -1);
  EXPECT_DOUBLE_EQ(s.n_layer * at(f, Scope::kBlock) + at(f, Scope::kLmHead),
                   gpt_forward_flops_per_sequence(s) * 2);
}

}  // namespace
}  // namespace llmprof::model
