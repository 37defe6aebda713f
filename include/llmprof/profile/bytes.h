// Bytes an op moves, from its recorded input shapes and dtypes: a lower bound (every input read
// once, every output written once, nothing re-read from memory), the memory side of the roofline
// next to op_flops' compute side. Output shapes follow from the op's definition.
#pragma once

#include <optional>
#include <string_view>

#include "llmprof/profile/events.h"

namespace llmprof::profile {

// The ops of model.fused_norm (llmprof/model/fused_norm.h), recorded by name with their inputs
// (forward: residual, delta, weight, bias; backward: grad_norm, grad_sum, sum, weight).
inline constexpr char kAddLayerNormOp[] = "llmprof::add_layer_norm";
inline constexpr char kAddLayerNormBackwardOp[] = "llmprof::add_layer_norm_backward";
inline constexpr char kAddRmsNormOp[] = "llmprof::add_rms_norm";
inline constexpr char kAddRmsNormBackwardOp[] = "llmprof::add_rms_norm_backward";
// model.fused_swiglu's (llmprof/model/fused_swiglu.h): forward gate, up; backward grad, gate, up.
inline constexpr char kSwigluOp[] = "llmprof::swiglu";
inline constexpr char kSwigluBackwardOp[] = "llmprof::swiglu_backward";

// Bytes of one element of a c10::ScalarType value as ShapeRecord stores it; 0 when unknown.
int element_bytes(int scalar_type);

// Bytes read + written by one call of op; nullopt for ops not modelled or shapes not recorded.
//   mm [M,K]x[K,N]: (MK + KN + MN) x e; addmm adds the bias; bmm/baddbmm per batch;
//   _softmax, gelu: read x, write y; their backward: read two inputs, write one;
//   native_layer_norm: read x, weight, bias; write y and fp32 mean and rstd per row;
//   add, mul (tensor or scalar other, broadcast): read both, write the broadcast shape;
//   add, sub, mul, div (and in place), threshold/tanh_backward: read both, write the broadcast;
//   sqrt, rsqrt, exp, neg, tanh, relu, sigmoid, clone: read x, write y;
//   addcmul_, addcdiv_, lerp_: read self and the others, write self; fill_, zero_: write self;
//   sum, mean: read the input (the reduced output is left out);
//   native_layer_norm_backward: read grad_out, x and the mean, write grad_in (rstd and weight are
//   past the four recorded inputs);
//   copy_: read src, write self; embedding: read the indices and the rows they pick, write them;
//   clamp(_min/_max), reciprocal: read x, write y; norm, linalg_vector_norm: read the input;
//   masked_fill(_): read self and the mask, write self; where: read all three, write the
//   broadcast; native_dropout: read x, write y and the 1-byte mask; its backward: read grad and
//   mask, write grad_input; dropout: read x, write y; bernoulli_: write self;
//   cat, stack: read every input, write as much (null when the list has more tensors than a
//   ShapeRecord keeps); index_select: read the index and the rows it picks, write them;
//   index_add_: read index and source, read and write at most as much of self as source;
//   embedding_(dense_)backward: read grad and indices, write the num_weights x C grad_weight;
//   nll_loss_forward: read the target and the element it picks per row; nll_loss_backward: read
//   grad_output and target, write grad_input;
//   llmprof::add_layer_norm / add_rms_norm: read residual, delta, weight (and bias), write the
//   sum (the addends' wider dtype), the norm (the sum's dtype; RMSNorm: the wider of it and the
//   weight's) and fp32 mean and rstd per row (RMSNorm: rstd); their _backward: read grad_norm,
//   grad_sum (when recorded), the sum, the weight and the row statistics, write the input's
//   gradient (the sum's shape and dtype), the weight's (and LayerNorm's bias's); the kernels'
//   per-block partial sums and a second gradient in a narrower addend's dtype are left out;
//   llmprof::swiglu: read gate and up, write h; its _backward: read grad, gate and up, write the
//   gradients of gate and up.
std::optional<double> op_bytes(std::string_view op, const ShapeRecord& shapes);

// Ops op_bytes or op_flops model: the tracer keeps their input shapes at profile.level=ops.
bool has_cost_model(std::string_view op);
bool is_binary_elementwise(std::string_view op);
// View and metadata ops (select, as_strided, view, reshape, expand, slice, t, transpose,
// permute, (un)squeeze, detach, alias, split, chunk, unbind, narrow): they move no bytes, and
// the ops level counts them without a timed record unless profile.record_view_ops is set.
bool is_view_op(std::string_view op);
bool is_unary_elementwise(std::string_view op);

}  // namespace llmprof::profile
