// The byte and FLOP models of model.fused_norm's ops (llmprof::add_layer_norm, add_rms_norm and
// their backward), hand-computed.
#include <gtest/gtest.h>

#include "llmprof/profile/analysis.h"
#include "llmprof/profile/bytes.h"

namespace llmprof::profile {
namespace {

// Inputs of the given dims and c10::ScalarType (6 fp32, 15 bf16); type -1 = not a tensor.
ShapeRecord norm_inputs(
    std::initializer_list<std::pair<std::initializer_list<int64_t>, int>> list) {
  ShapeRecord s;
  int i = 0;
  for (const auto& [dims, type] : list) {
    if (type >= 0) {
      s.ndim[i] = static_cast<int8_t>(dims.size());
      s.scalar_type[i] = static_cast<int8_t>(type);
      int k = 0;
      for (int64_t d : dims) s.dims[i][k++] = d;
    }
    ++i;
  }
  return s;
}

TEST(OpBytesFusedNorm, AddLayerNormAndItsBackward) {
  // residual (4,8) fp32 128 B, delta (4,8) bf16 64 B, weight and bias (8) fp32 32 B each, read;
  // the sum and the norm (fp32, 32 elements) 128 B each and mean and rstd 4 rows x 8 B written.
  const ShapeRecord fwd = norm_inputs({{{4, 8}, 6}, {{4, 8}, 15}, {{8}, 6}, {{8}, 6}});
  EXPECT_DOUBLE_EQ(*op_bytes(kAddLayerNormOp, fwd), 128 + 64 + 32 + 32 + 128 + 128 + 32);
  EXPECT_DOUBLE_EQ(*op_flops(kAddLayerNormOp, fwd), 6 * 32);  // layer_norm's 5 + the add's 1
  EXPECT_TRUE(has_cost_model(kAddLayerNormOp));
  // grad_norm, grad_sum, sum (4,8) fp32 and weight (8) read with 4 x 8 B of statistics; d(sum)
  // 128 B, d(weight) and d(bias) 32 B each written.
  const ShapeRecord bwd = norm_inputs({{{4, 8}, 6}, {{4, 8}, 6}, {{4, 8}, 6}, {{8}, 6}});
  EXPECT_DOUBLE_EQ(*op_bytes(kAddLayerNormBackwardOp, bwd),
                   128 + 128 + 128 + 32 + 32 + 128 + 32 + 32);
  EXPECT_DOUBLE_EQ(*op_flops(kAddLayerNormBackwardOp, bwd), 2 * 6 * 32);
  EXPECT_TRUE(has_cost_model(kAddLayerNormBackwardOp));
}

TEST(OpBytesFusedNorm, AddRmsNormAndItsBackwardWithoutTheResidualGradient) {
  // residual and delta (4,8) bf16 64 B each, weight (8) fp32 32 B read; the sum bf16 64 B, the
  // norm fp32 (Hugging Face's promotion to the weight's dtype) 128 B, rstd 4 x 4 B written.
  const ShapeRecord fwd = norm_inputs({{{4, 8}, 15}, {{4, 8}, 15}, {{8}, 6}});
  EXPECT_DOUBLE_EQ(*op_bytes(kAddRmsNormOp, fwd), 64 + 64 + 32 + 64 + 128 + 16);
  EXPECT_DOUBLE_EQ(*op_flops(kAddRmsNormOp, fwd), 5 * 32);
  // grad_norm fp32 128 B, no grad_sum, the sum bf16 64 B, weight 32 B, rstd 16 B read; d(sum)
  // bf16 64 B and d(weight) 32 B written.
  const ShapeRecord bwd = norm_inputs({{{4, 8}, 6}, {{}, -1}, {{4, 8}, 15}, {{8}, 6}});
  EXPECT_DOUBLE_EQ(*op_bytes(kAddRmsNormBackwardOp, bwd), 128 + 64 + 32 + 16 + 64 + 32);
  EXPECT_DOUBLE_EQ(*op_flops(kAddRmsNormBackwardOp, bwd), 2 * 5 * 32);
}

TEST(OpBytesFusedNorm, ShapesNotRecordedGiveNoFigure) {
  const ShapeRecord none;
  EXPECT_FALSE(op_bytes(kAddLayerNormOp, none).has_value());
  EXPECT_FALSE(op_bytes(kAddRmsNormBackwardOp, none).has_value());
}

}  // namespace
}  // namespace llmprof::profile
