// Bytes moved per op against hand-computed values: every input read once, every output written
// once (the roofline's memory side).
#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "llmprof/profile/bytes.h"

namespace llmprof::profile {
namespace {

constexpr int kFloat = 6, kBf16 = 15, kLong = 4;

// A ShapeRecord from (input index, dtype, dims) triples; other inputs are not tensors.
struct Input {
  int index;
  int dtype;
  std::vector<int64_t> dims;
};
ShapeRecord bytes_shapes(std::initializer_list<Input> inputs) {
  ShapeRecord s;
  for (const Input& in : inputs) {
    s.ndim[in.index] = static_cast<int8_t>(in.dims.size());
    s.scalar_type[in.index] = static_cast<int8_t>(in.dtype);
    for (size_t d = 0; d < in.dims.size(); ++d) s.dims[in.index][d] = in.dims[d];
  }
  return s;
}

TEST(OpBytes, Matmuls) {
  // mm [64,128] x [128,32] fp32: (64*128 + 128*32 + 64*32) * 4 = 57,344.
  EXPECT_EQ(op_bytes("aten::mm", bytes_shapes({{0, kFloat, {64, 128}}, {1, kFloat, {128, 32}}})), 57344);
  // bf16 halves it: 28,672.
  EXPECT_EQ(op_bytes("aten::mm", bytes_shapes({{0, kBf16, {64, 128}}, {1, kBf16, {128, 32}}})), 28672);
  // addmm with a [32] bias: + 32 * 4 = 57,472.
  EXPECT_EQ(op_bytes("aten::addmm", bytes_shapes({{0, kFloat, {32}},
                                            {1, kFloat, {64, 128}},
                                            {2, kFloat, {128, 32}}})),
            57472);
  // bmm [4,16,8] x [4,8,16] fp32: (512 + 512 + 4*16*16) * 4 = 8,192.
  EXPECT_EQ(op_bytes("aten::bmm", bytes_shapes({{0, kFloat, {4, 16, 8}}, {1, kFloat, {4, 8, 16}}})),
            8192);
}

TEST(OpBytes, ElementwiseAndNorms) {
  const ShapeRecord x = bytes_shapes({{0, kFloat, {2, 16, 64}}});  // 2,048 floats = 8,192 bytes
  EXPECT_EQ(op_bytes("aten::_softmax", x), 16384);
  EXPECT_EQ(op_bytes("aten::gelu", x), 16384);
  EXPECT_EQ(op_bytes("aten::gelu_backward", bytes_shapes({{0, kFloat, {2, 16, 64}},
                                                    {1, kFloat, {2, 16, 64}}})),
            24576);
  // layer_norm over 64 with weight and bias: x 8,192 + y 8,192 + mean/rstd 2*32 rows*4 = 256,
  // + weight 256 + bias 256 = 17,152.
  EXPECT_EQ(op_bytes("aten::native_layer_norm", bytes_shapes({{0, kFloat, {2, 16, 64}},
                                                        {2, kFloat, {64}},
                                                        {3, kFloat, {64}}})),
            17152);
  // add with a broadcast bias [64]: 8,192 + 256 + 8,192 = 16,640; mul by a scalar: 16,384.
  EXPECT_EQ(op_bytes("aten::add", bytes_shapes({{0, kFloat, {2, 16, 64}}, {1, kFloat, {64}}})), 16640);
  EXPECT_EQ(op_bytes("aten::mul", x), 16384);
  // copy_ fp32 <- bf16: write 8,192, read 4,096.
  EXPECT_EQ(op_bytes("aten::copy_", bytes_shapes({{0, kFloat, {2, 16, 64}}, {1, kBf16, {2, 16, 64}}})),
            12288);
}

TEST(OpBytes, EmbeddingReadsOnlyTheRowsItPicks) {
  // weight [50257, 768] fp32, indices [8, 64] int64: 512 * 8 + 2 * 512 * 768 * 4 = 3,149,824.
  EXPECT_EQ(op_bytes("aten::embedding", bytes_shapes({{0, kFloat, {50257, 768}}, {1, kLong, {8, 64}}})),
            3149824);
}

TEST(OpBytes, OptimizerAndBackwardOps) {
  const ShapeRecord p = bytes_shapes({{0, kFloat, {128, 64}}, {1, kFloat, {128, 64}}, {2, kFloat, {128, 64}}});
  // addcdiv_(exp_avg, denom): self read + written, two others read: 4 x 32,768.
  EXPECT_EQ(op_bytes("aten::addcdiv_", p), 131072);
  EXPECT_EQ(op_bytes("aten::sqrt", bytes_shapes({{0, kFloat, {128, 64}}})), 65536);
  EXPECT_EQ(op_bytes("aten::zero_", bytes_shapes({{0, kFloat, {128, 64}}})), 32768);
  EXPECT_EQ(op_bytes("aten::sum", bytes_shapes({{0, kBf16, {128, 64}}})), 16384);  // output left out
  // layer_norm backward [2, 16, 64]: grad_out, x read, grad_in written (3 x 8,192); input 2 is
  // normalized_shape (not a tensor), 3 the mean [2, 16, 1] fp32 (128); rstd and weight come
  // after the four recorded inputs and are left out (a lower bound).
  EXPECT_EQ(op_bytes("aten::native_layer_norm_backward",
                     bytes_shapes({{0, kFloat, {2, 16, 64}}, {1, kFloat, {2, 16, 64}},
                             {3, kFloat, {2, 16, 1}}})),
            24576 + 128);
  EXPECT_TRUE(has_cost_model("aten::addcdiv_"));
  EXPECT_TRUE(has_cost_model("aten::mm"));
  EXPECT_FALSE(has_cost_model("aten::view"));
}

TEST(OpBytes, UnknownOpsAndMissingShapesAreNull) {
  EXPECT_FALSE(op_bytes("aten::conv2d", bytes_shapes({{0, kFloat, {1, 3, 8, 8}}})).has_value());
  EXPECT_FALSE(op_bytes("aten::mm", ShapeRecord{}).has_value());
  EXPECT_EQ(element_bytes(99), 0);
}

}  // namespace
}  // namespace llmprof::profile
