#include "llmprof/model/quantize.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "llmprof/error.h"
#include "llmprof/model/distilbert.h"
#include "llmprof/model/gpt.h"

namespace llmprof::model {
namespace {

// Tolerances of int8 dynamic quantization against fp32. Per-tensor 8-bit weights and per-call
// 8-bit activations cost about 0.4% of each matmul's range. Measured on these tiny models (seeds
// below; onednn and qnnpack alike, integer accumulation being exact): max |int8 - fp32| 0.0027
// (gpt), 0.0047 (distilbert mlm), 0.00018 (classify); relative to max |fp32| 0.0044, 0.012 and
// 0.032 (the 2 classify logits are ~0.006, small next to their error). Bounds: ~3x the worst.
constexpr double kMaxRelativeError = 0.1;
constexpr double kMaxAbsError = 0.015;

GptOptions tiny_gpt() {
  GptOptions o;
  o.n_layer = 2;
  o.n_head = 2;
  o.n_embd = 32;
  o.block_size = 16;
  o.vocab_size = 65;
  return o;
}

DistilBertOptions tiny_bert(EncoderHead head) {
  DistilBertOptions o;
  o.n_layer = 2;
  o.n_head = 2;
  o.dim = 32;
  o.hidden_dim = 64;
  o.vocab_size = 100;
  o.max_positions = 16;
  o.head = head;
  return o;
}

// The engine called `name` (the tests name engines as bench.quant_engine does).
config::QuantEngine engine(const std::string& name) {
  return config::parse_enum<config::QuantEngine>(name);
}

bool supported(const std::string& name) {
  const auto e = quantized_engines();
  return std::find(e.begin(), e.end(), engine(name)) != e.end();
}

struct Diff {
  double max_abs, relative;
};
Diff compare(const torch::Tensor& ref, const torch::Tensor& q) {
  const double max_abs = (ref - q).abs().max().item<double>();
  return {max_abs, max_abs / ref.abs().max().item<double>()};
}

TEST(QuantizedEngines, ListsKnownNames) {
  const auto engines = quantized_engines();
  std::string all;
  for (const config::QuantEngine engine : engines) {
    const std::string e(config::name(engine));
    all += e + " ";
    EXPECT_TRUE(e == "fbgemm" || e == "qnnpack" || e == "onednn" || e == "x86") << e;
  }
  std::printf("[quantize] engines of this LibTorch: %s\n", all.c_str());
}

class QuantizeEngine : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!supported(GetParam())) {
      GTEST_SKIP() << "quantized engine " << GetParam() << " is not built into this LibTorch";
    }
  }
};

TEST_P(QuantizeEngine, GptLogitsCloseToFp32AndDequantizeRestoresThem) {
  torch::manual_seed(20);
  Gpt m(tiny_gpt());
  m->eval();
  torch::NoGradGuard ng;
  torch::Tensor x = torch::randint(65, {4, 16}, torch::kLong);
  torch::Tensor ref = m->forward(x);

  QuantizeStats stats = quantize_dynamic_int8(*m, engine(GetParam()));
  EXPECT_EQ(stats.linears, 8);  // c_attn, c_proj, c_fc, c_proj per layer
  // Per layer: int8 weights 32*96 + 32*32 + 32*128 + 128*32 = 12288, 4 x 8 bytes of scale and
  // zero point, fp32 biases (96 + 32 + 128 + 32) * 4 = 1152.
  EXPECT_EQ(stats.weight_bytes, 2 * (12288 + 32 + 1152));
  EXPECT_EQ(config::name(stats.engine), GetParam());
  const Diff d = compare(ref, m->forward(x));
  std::printf("[quantize %s] gpt logits: max |int8 - fp32| = %.3g, relative to max |fp32| = %.3g\n",
              GetParam(), d.max_abs, d.relative);
  EXPECT_LT(d.relative, kMaxRelativeError);
  EXPECT_LT(d.max_abs, kMaxAbsError);
  EXPECT_GT(d.max_abs, 0.0) << "the int8 path must actually run";

  dequantize(*m);
  EXPECT_TRUE(torch::equal(m->forward(x), ref)) << "dequantize must restore the fp32 output";
}

TEST_P(QuantizeEngine, DistilBertLogitsCloseToFp32) {
  for (EncoderHead head : {EncoderHead::kMaskedLm, EncoderHead::kClassify}) {
    torch::manual_seed(21);
    DistilBert m(tiny_bert(head));
    m->eval();
    torch::NoGradGuard ng;
    torch::Tensor ids = torch::randint(100, {4, 16}, torch::kLong);
    torch::Tensor mask = torch::ones({4, 16}, torch::kLong);
    mask.index_put_({0, torch::indexing::Slice(10, 16)}, 0);
    torch::Tensor pos = torch::randint(16, {4, 3}, torch::kLong);
    auto logits = [&] {
      torch::Tensor h = m->encode(ids, mask);
      return head == EncoderHead::kMaskedLm ? m->mlm_logits(h, pos) : m->classify_logits(h);
    };
    torch::Tensor ref = logits();
    QuantizeStats stats = quantize_dynamic_int8(*m, engine(GetParam()));
    EXPECT_EQ(stats.linears, 2 * 4 + (head == EncoderHead::kMaskedLm ? 1 : 2));
    const Diff d = compare(ref, logits());
    const char* name = head == EncoderHead::kMaskedLm ? "mlm" : "classify";
    std::printf("[quantize %s] distilbert %s logits: max |int8 - fp32| = %.3g, relative = %.3g\n",
                GetParam(), name, d.max_abs, d.relative);
    EXPECT_LT(d.relative, kMaxRelativeError) << name;
    EXPECT_LT(d.max_abs, kMaxAbsError) << name;
    EXPECT_GT(d.max_abs, 0.0) << name << ": the int8 path must actually run";
    dequantize(*m);
    EXPECT_TRUE(torch::equal(logits(), ref)) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, QuantizeEngine, ::testing::Values("onednn", "qnnpack"));

// An engine name outside the table stops at the config boundary; a known engine this LibTorch
// lacks stops in quantize_dynamic_int8, naming the ones it has.
TEST(Quantize, UnknownEngineThrowsConfigErrorNamingIt) {
  try {
    engine("tpu_int4");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tpu_int4"), std::string::npos) << what;
    EXPECT_EQ(e.key(), "bench.quant_engine");
  }
  std::string missing;
  for (const char* name : {"fbgemm", "x86", "qnnpack", "onednn"}) {
    if (!supported(name)) missing = name;
  }
  if (missing.empty()) GTEST_SKIP() << "every int8 engine is supported by this LibTorch";
  torch::manual_seed(22);
  Gpt m(tiny_gpt());
  try {
    quantize_dynamic_int8(*m, engine(missing));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(missing), std::string::npos) << what;
    EXPECT_NE(what.find("supported:"), std::string::npos) << what;
  }
}

TEST(ParameterBytes, CountsParametersAndBuffersTiedOnce) {
  torch::manual_seed(23);
  Gpt gpt(tiny_gpt());
  // fp32 parameters + per layer a 16x16 bool causal mask + 16 int64 positions.
  EXPECT_EQ(parameter_bytes(*gpt), 4 * gpt->num_parameters() + 2 * 256 + 16 * 8);
  DistilBert bert(tiny_bert(EncoderHead::kMaskedLm));
  EXPECT_EQ(parameter_bytes(*bert), 4 * bert->num_parameters() + 16 * 8);

  // The same tensor registered twice counts once.
  torch::nn::Module tied;
  torch::Tensor w = torch::zeros({10, 3});
  tied.register_parameter("a", w);
  tied.register_parameter("b", w);
  EXPECT_EQ(parameter_bytes(tied), 10 * 3 * 4);
}

}  // namespace
}  // namespace llmprof::model
