#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "llmprof/model/gpt.h"
#include "llmprof/profile/scope.h"

namespace llmprof::model {
namespace {

using torch::indexing::Slice;

GptOptions kv_tiny() {
  GptOptions o;
  o.n_layer = 2;
  o.n_head = 2;
  o.n_embd = 32;
  o.block_size = 16;
  o.vocab_size = 65;
  o.dropout = 0.1;  // off in eval
  return o;
}

TEST(GptKvCache, PrefillThenSingleStepsMatchFullForward) {
  torch::manual_seed(10);
  Gpt m(kv_tiny());
  m->eval();
  torch::NoGradGuard ng;
  torch::Tensor x = torch::randint(65, {2, 16}, torch::kLong);
  torch::Tensor full = m->forward(x);  // (2,16,65)

  KvCache cache = m->make_cache(2, 16);
  const void* k0 = cache.k[0].data_ptr();
  torch::Tensor prefill = m->forward_cached(x.index({Slice(), Slice(0, 10)}), cache);
  double max_diff = (prefill - full.index({Slice(), Slice(0, 10)})).abs().max().item<double>();
  for (int64_t t = 10; t < 16; ++t) {
    torch::Tensor step = m->forward_cached(x.index({Slice(), Slice(t, t + 1)}), cache);
    ASSERT_EQ(step.sizes(), (std::vector<int64_t>{2, 1, 65}));
    max_diff = std::max(max_diff,
                        (step - full.index({Slice(), Slice(t, t + 1)})).abs().max().item<double>());
  }
  std::printf("[kv cache] max |cached - full| logits = %.3g\n", max_diff);
  EXPECT_LT(max_diff, 1e-4) << "max |cached - full| " << max_diff;
  EXPECT_EQ(cache.length, 16);
  EXPECT_EQ(cache.k[0].data_ptr(), k0) << "the cache must be written in place";
}

TEST(GptKvCache, OverflowThrowsInvalidArgument) {
  torch::manual_seed(11);
  Gpt m(kv_tiny());
  m->eval();
  KvCache cache = m->make_cache(1, 8);
  m->forward_cached(torch::zeros({1, 8}, torch::kLong), cache);
  try {
    m->forward_cached(torch::zeros({1, 1}, torch::kLong), cache);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("overflow"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cache.length, 8) << "a refused call must leave the cache as it was";
  EXPECT_THROW(m->make_cache(1, 17), std::invalid_argument);  // beyond block_size
  EXPECT_THROW(m->generate(torch::zeros({1, 10}, torch::kLong), 7), std::invalid_argument);
}

TEST(GptKvCache, GreedyGenerateMatchesRecomputingTheWholeSequence) {
  torch::manual_seed(12);
  Gpt m(kv_tiny());
  m->eval();
  torch::NoGradGuard ng;
  torch::Tensor prompt = torch::randint(65, {2, 4}, torch::kLong);
  torch::Tensor out = m->generate(prompt, 8);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{2, 12}));
  torch::Tensor seq = prompt;
  for (int i = 0; i < 8; ++i) {
    torch::Tensor logits = m->forward(seq);
    seq = torch::cat({seq, logits.select(1, seq.size(1) - 1).argmax(-1, true)}, 1);
  }
  EXPECT_TRUE(torch::equal(out, seq)) << out << "\nvs\n" << seq;
}

TEST(GptKvCache, CachedStepsEmitTheSameScopes) {
  torch::manual_seed(13);
  Gpt m(kv_tiny());
  m->eval();
  KvCache cache = m->make_cache(1, 4);
  profile::ScopeRecorder r(1024, [] { return int64_t{0}; });
  profile::set_active_scope_recorder(&r);
  m->forward_cached(torch::zeros({1, 3}, torch::kLong), cache);
  m->forward_cached(torch::zeros({1, 1}, torch::kLong), cache);
  profile::set_active_scope_recorder(nullptr);
  int blocks = 0, scores = 0, lm_head = 0;
  for (const auto& e : r.events()) {
    const auto s = static_cast<profile::Scope>(e.scope);
    blocks += s == profile::Scope::kBlock;
    scores += s == profile::Scope::kAttnScores;
    lm_head += s == profile::Scope::kLmHead;
  }
  EXPECT_EQ(blocks, 4);  // 2 layers x 2 calls
  EXPECT_EQ(scores, 4);
  EXPECT_EQ(lm_head, 2);
}

}  // namespace
}  // namespace llmprof::model
