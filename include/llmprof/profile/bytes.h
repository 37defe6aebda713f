// Bytes an op moves, from its recorded input shapes and dtypes: a lower bound (every input read
// once, every output written once, nothing re-read from memory), the memory side of the roofline
// next to op_flops' compute side. Output shapes follow from the op's definition.
#pragma once

#include <optional>
#include <string_view>

#include "llmprof/profile/events.h"

namespace llmprof::profile {

// Bytes of one element of a c10::ScalarType value as ShapeRecord stores it; 0 when unknown.
int element_bytes(int scalar_type);

// Bytes read + written by one call of op; nullopt for ops not modelled or shapes not recorded.
//   mm [M,K]x[K,N]: (MK + KN + MN) x e; addmm adds the bias; bmm/baddbmm per batch;
//   _softmax, gelu: read x, write y; their backward: read two inputs, write one;
//   native_layer_norm: read x, weight, bias; write y and fp32 mean and rstd per row;
//   add, mul (tensor or scalar other, broadcast): read both, write the broadcast shape;
//   copy_: read src, write self; embedding: read the indices and the rows they pick, write them.
std::optional<double> op_bytes(std::string_view op, const ShapeRecord& shapes);

}  // namespace llmprof::profile
