// The space of llmprof tune: --space checked against the schema, the space generated for a
// config and a device (GPU-only knobs on a named GPU), the order of predicted effect, and the
// candidates of a grid.
#include "llmprof/tune/space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::tune {
namespace {

const std::string kLlama = std::string(LLMPROF_SOURCE_DIR) + "/configs/llama_tiny.yaml";
const std::string kDistil = std::string(LLMPROF_SOURCE_DIR) + "/configs/distilbert_sentiment.yaml";

Machine cpu_machine(int64_t cores = 2) {
  Machine m;
  m.device.name = "cpu";
  m.device.cuda = false;
  m.device.capacity_bytes = int64_t{24} << 30;
  m.cores = cores;
  m.largest_batch = 64;
  m.vocab_size = 65;
  return m;
}

Machine h100() {
  Machine m = cpu_machine(16);
  m.device.name = "h100-80gb";
  m.device.cuda = true;
  m.device.fp32_flops_per_s = 67e12;
  m.device.bf16_flops_per_s = 989e12;
  return m;
}

bool has_key(const std::vector<Knob>& knobs, const std::string& key) {
  return std::any_of(knobs.begin(), knobs.end(), [&](const Knob& k) { return k.key == key; });
}

std::string config_error_of(const std::vector<std::string>& space) {
  try {
    parse_space(test::kTinyConfig, {}, space, cpu_machine());
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

TEST(TuneSpace, RefusesAnUnknownKnobNamingTheNearestKey) {
  const std::string m = config_error_of({"thread=1,2"});
  test::expect_contains(m, "thread");
  test::expect_contains(m, "threads");
}

TEST(TuneSpace, RefusesAValueOutsideTheKeysDomain) {
  const std::string m = config_error_of({"train.precision=fp32,fp8"});
  test::expect_contains(m, "train.precision");
  test::expect_contains(m, "fp8");
}

TEST(TuneSpace, RefusesAKeyTheTrialsFixAndMalformedKnobs) {
  EXPECT_THROW(parse_space(test::kTinyConfig, {}, {"schedule.max_steps=5,10"}, cpu_machine()),
               UsageError);
  EXPECT_THROW(parse_space(test::kTinyConfig, {}, {"threads"}, cpu_machine()), UsageError);
  EXPECT_THROW(parse_space(test::kTinyConfig, {}, {"threads=1", "threads=2"}, cpu_machine()),
               UsageError);
}

// threads 1 -> 2 on 2 cores: predicted 1/2 (ideal scaling); the sleep key: no model (1). The
// larger effect comes first whatever the order given.
TEST(TuneSpace, OrdersKnobsByPredictedEffectAndRecordsTheSource) {
  const auto knobs = parse_space(test::kTinyConfig, {},
                                 {"train.test_step_sleep_ms=0,5", "threads=1,2"}, cpu_machine());
  ASSERT_EQ(knobs.size(), 2u);
  EXPECT_EQ(knobs[0].key, "threads");
  EXPECT_DOUBLE_EQ(knobs[0].values[1].prediction.ratio, 0.5);
  EXPECT_EQ(knobs[0].values[1].prediction.source, "prior: ideal scaling over cores");
  EXPECT_DOUBLE_EQ(knobs[1].effect(), 0);
  EXPECT_EQ(knobs[0].numerics, Numerics::kKept);
}

// tiny_test: threads 1, batch 4 x accum 1. Grid of threads {1, 2} x sleep {0, 5}: 4 points, the
// start (threads 1, sleep 0) left out: 3 candidates, largest predicted effect first.
TEST(TuneSpace, CandidatesOfAGridLeaveTheStartOutInOrderOfPredictedEffect) {
  const auto knobs = parse_space(test::kTinyConfig, {},
                                 {"train.test_step_sleep_ms=0,5", "threads=1,2"}, cpu_machine());
  const auto cands = candidates_of(knobs, test::kTinyConfig, {});
  ASSERT_EQ(cands.size(), 3u);
  for (size_t i = 1; i < cands.size(); ++i) {
    EXPECT_GE(std::abs(std::log(cands[i - 1].prediction.ratio)),
              std::abs(std::log(cands[i].prediction.ratio)));
  }
  EXPECT_EQ(cands[0].sets.front(), "threads=2");
  EXPECT_EQ(cands.back().sets, std::vector<std::string>{"train.test_step_sleep_ms=5"});
}

// Three knobs of two values, each with the start's: a grid of 8 points, 7 candidates (not one at
// a time, which three knobs of "unchanged or one of two values" would give: 27 points).
TEST(TuneSpace, AGridOfValuesThatIncludeTheStartsHasEveryCombination) {
  const auto knobs =
      parse_space(test::kTinyConfig, {},
                  {"threads=1,2", "train.batch_size=4,8", "data.num_workers=0,1"}, cpu_machine());
  EXPECT_EQ(candidates_of(knobs, test::kTinyConfig, {}).size(), 7u);
}

TEST(TuneSpace, GeneratedOnCpuSearchesThreadsAndLeavesGpuKnobsOut) {
  const auto knobs = default_space(test::kTinyConfig, {}, cpu_machine());
  EXPECT_TRUE(has_key(knobs, "threads"));
  EXPECT_TRUE(has_key(knobs, "train.batch_size+train.grad_accum_steps"));  // 4 x 1 -> 2 x 2
  EXPECT_TRUE(has_key(knobs, "train.precision"));
  EXPECT_TRUE(has_key(knobs, "model.attention"));
  EXPECT_FALSE(has_key(knobs, "train.cuda_graphs"));
  EXPECT_FALSE(has_key(knobs, "train.cuda_expandable_segments"));
  EXPECT_FALSE(has_key(knobs, "model.fused_loss"));
  EXPECT_FALSE(has_key(knobs, "model.fused_norm"));
  for (size_t i = 1; i < knobs.size(); ++i) EXPECT_GE(knobs[i - 1].effect(), knobs[i].effect());
}

TEST(TuneSpace, GeneratedForANamedGpuHasItsKnobsAndPredictsBf16FromItsPeaks) {
  const auto knobs = default_space(test::kTinyConfig, {}, h100());
  EXPECT_TRUE(has_key(knobs, "train.cuda_graphs"));
  EXPECT_TRUE(has_key(knobs, "model.fused_loss"));
  EXPECT_TRUE(has_key(knobs, "model.fused_norm"));
  EXPECT_FALSE(has_key(knobs, "threads"));
  for (const Knob& k : knobs) {  // the fused add + norm keeps the numerics; its prior is fixed
    if (k.key != "model.fused_norm") continue;
    EXPECT_EQ(k.numerics, Numerics::kKept);
    ASSERT_EQ(k.values.size(), 1u);
    EXPECT_EQ(k.values[0].sets, std::vector<std::string>{"model.fused_norm=true"});
    EXPECT_DOUBLE_EQ(k.values[0].prediction.ratio, 0.97);
    EXPECT_EQ(k.values[0].prediction.source, "prior: fixed");
  }
  ASSERT_FALSE(knobs.empty());
  EXPECT_EQ(knobs[0].key, "train.precision");  // fp32 / bf16 peak: 67 / 989, the largest effect
  EXPECT_NEAR(knobs[0].values[0].prediction.ratio, 67.0 / 989.0, 1e-12);
}

// The caching allocator's expandable segments: a knob of a CUDA device only, keeping the
// numerics, predicted as memory, not speed; tuned.yaml carries it as the key.
TEST(TuneSpace, ExpandableSegmentsAreAKnobOfANamedGpuThatKeepsTheNumerics) {
  const auto knobs = default_space(test::kTinyConfig, {}, h100());
  const auto it = std::find_if(knobs.begin(), knobs.end(), [](const Knob& k) {
    return k.key == "train.cuda_expandable_segments";
  });
  ASSERT_NE(it, knobs.end());
  EXPECT_EQ(it->numerics, Numerics::kKept);
  ASSERT_EQ(it->values.size(), 1u);
  EXPECT_EQ(it->values[0].sets, std::vector<std::string>{"train.cuda_expandable_segments=true"});
  EXPECT_EQ(it->values[0].prediction.ratio, 1);
  EXPECT_EQ(it->values[0].prediction.source.rfind("prior: memory, not speed", 0), 0u)
      << it->values[0].prediction.source;
  auto kept = knobs;
  keep_numerics_only(kept);
  EXPECT_TRUE(has_key(kept, "train.cuda_expandable_segments"));
  // Already on in the config: nothing to search.
  EXPECT_FALSE(
      has_key(default_space(test::kTinyConfig,
                            {"device=cuda", "train.cuda_expandable_segments=true"}, h100()),
              "train.cuda_expandable_segments"));
}

// On the CPU the key is refused by the config's own check, naming it.
TEST(TuneSpace, ExpandableSegmentsInTheSpaceOfACpuConfigAreAConfigErrorNamingTheKey) {
  try {
    parse_space(test::kTinyConfig, {}, {"train.cuda_expandable_segments=true"}, cpu_machine());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "train.cuda_expandable_segments");
    EXPECT_NE(std::string(e.what()).find("needs device=cuda"), std::string::npos) << e.what();
  }
}

TEST(TuneSpace, GeneratedOnlyFromKeysTheModelTypeHas) {
  // distilbert has no checkpointing or attention implementation to choose.
  const auto knobs = default_space(kDistil, {}, cpu_machine());
  EXPECT_FALSE(has_key(knobs, "train.activation_checkpointing"));
  EXPECT_TRUE(has_key(knobs, "threads"));
  EXPECT_FALSE(default_space(kLlama, {}, cpu_machine()).empty());
}

// The fused SwiGLU gate is a llama knob on a GPU: the gpt config does not load with it.
TEST(TuneSpace, FusedSwigluOnlyForLlamaOnAGpu) {
  EXPECT_FALSE(has_key(default_space(test::kTinyConfig, {}, h100()), "model.fused_swiglu"));
  EXPECT_FALSE(has_key(default_space(kLlama, {}, cpu_machine()), "model.fused_swiglu"));
  const auto knobs = default_space(kLlama, {}, h100());
  EXPECT_TRUE(has_key(knobs, "model.fused_swiglu"));
  EXPECT_TRUE(has_key(knobs, "model.fused_norm"));
}

TEST(TuneSpace, KeepNumericsDropsPrecisionAndKeepsThreads) {
  auto knobs = default_space(test::kTinyConfig, {}, cpu_machine());
  const auto dropped = keep_numerics_only(knobs);
  EXPECT_NE(std::find(dropped.begin(), dropped.end(), "train.precision"), dropped.end());
  EXPECT_TRUE(has_key(knobs, "threads"));
  EXPECT_FALSE(has_key(knobs, "train.precision"));
}

}  // namespace
}  // namespace llmprof::tune
