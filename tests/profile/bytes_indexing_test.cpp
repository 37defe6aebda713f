// Byte models of the masking, dropout, selection, loss and embedding-backward ops, which the
// modules roofline used to count as entirely lost.
#include <gtest/gtest.h>

#include "llmprof/profile/bytes.h"

namespace llmprof::profile {
namespace {

// Inputs of the given dims and c10::ScalarType (6 fp32, 4 int64, 11 bool); {} = not a tensor.
ShapeRecord inputs(std::initializer_list<std::pair<std::initializer_list<int64_t>, int>> list) {
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

ShapeRecord with_int(ShapeRecord s, int slot, int64_t value) {
  s.scalar_type[slot] = ShapeRecord::kIntArg;
  s.dims[slot][0] = value;
  return s;
}

TEST(OpBytesIndexing, MaskingAndWhere) {
  // scores (2,4,8,8) fp32 = 2,048 bytes read and written; the mask (8,8) bool, 64 bytes, read.
  const ShapeRecord fill = inputs({{{2, 4, 8, 8}, 6}, {{8, 8}, 11}});
  EXPECT_DOUBLE_EQ(*op_bytes("aten::masked_fill_", fill), 2 * 2048 + 64);
  EXPECT_TRUE(has_cost_model("aten::masked_fill_"));
  // where(cond (8,1) bool, a (1,8) fp32, b (8,8) fp32): 8 + 32 + 256 read, 64 x 4 written.
  const ShapeRecord where = inputs({{{8, 1}, 11}, {{1, 8}, 6}, {{8, 8}, 6}});
  EXPECT_DOUBLE_EQ(*op_bytes("aten::where", where), 8 + 32 + 256 + 256);
}

TEST(OpBytesIndexing, DropoutAndItsBackward) {
  const ShapeRecord x = inputs({{{16, 32}, 6}});  // 2,048 bytes, 512 elements
  EXPECT_DOUBLE_EQ(*op_bytes("aten::native_dropout", x), 2 * 2048 + 512);  // + the bool mask
  const ShapeRecord grad = inputs({{{16, 32}, 6}, {{16, 32}, 11}});
  EXPECT_DOUBLE_EQ(*op_bytes("aten::native_dropout_backward", grad), 2 * 2048 + 512);
  EXPECT_DOUBLE_EQ(*op_bytes("aten::dropout", x), 2 * 2048);
  EXPECT_DOUBLE_EQ(*op_bytes("aten::bernoulli_", x), 2048);
}

TEST(OpBytesIndexing, EmbeddingBackwardAndIndexAdd) {
  // grad (4,16,32) fp32 = 8,192 bytes, indices (4,16) int64 = 512, num_weights 65: the 65 x 32
  // fp32 grad_weight (8,320 bytes) written.
  const ShapeRecord g = with_int(inputs({{{4, 16, 32}, 6}, {{4, 16}, 4}, {{}, -1}}), 2, 65);
  EXPECT_DOUBLE_EQ(*op_bytes("aten::embedding_dense_backward", g), 8192 + 512 + 8320);
  // index_add_(self (65,32), 0, index (64), source (64,32)): 512 + 8,192 read; 8,192 (less than
  // self's 8,320) read and written.
  const ShapeRecord add =
      with_int(inputs({{{65, 32}, 6}, {{}, -1}, {{64}, 4}, {{64, 32}, 6}}), 1, 0);
  EXPECT_DOUBLE_EQ(*op_bytes("aten::index_add_", add), 512 + 8192 + 2 * 8192);
  // index_select without its dim recorded: unknown.
  EXPECT_FALSE(op_bytes("aten::index_select", inputs({{{65, 32}, 6}, {{}, -1}, {{64}, 4}})));
}

TEST(OpBytesIndexing, NllLoss) {
  // log-probs (768,65) fp32, target (768) int64: the target and one element per row read.
  const ShapeRecord fwd = inputs({{{768, 65}, 6}, {{768}, 4}});
  EXPECT_DOUBLE_EQ(*op_bytes("aten::nll_loss_forward", fwd), 768 * 8 + 768 * 4);
  // backward (grad_output (), self, target): grad_input (768 x 65 x 4) written.
  const ShapeRecord bwd = inputs({{{}, 6}, {{768, 65}, 6}, {{768}, 4}});
  EXPECT_DOUBLE_EQ(*op_bytes("aten::nll_loss_backward", bwd), 4 + 768 * 65 * 4 + 768 * 8);
}

}  // namespace
}  // namespace llmprof::profile
