#include "llmprof/profile/bytes.h"

#include <algorithm>

#include "llmprof/profile/analysis.h"

namespace llmprof::profile {

namespace {

double numel(const ShapeRecord& s, int i) {
  double n = 1;
  for (int d = 0; d < s.ndim[i]; ++d) n *= static_cast<double>(s.dims[i][d]);
  return n;
}

bool has(const ShapeRecord& s, int i, int nd) { return s.ndim[i] == nd; }
bool tensor(const ShapeRecord& s, int i) { return s.ndim[i] >= 0; }

// Bytes of input i: its elements x its element size.
double bytes(const ShapeRecord& s, int i) { return numel(s, i) * element_bytes(s.scalar_type[i]); }

// Elements of the broadcast of inputs a and b (numpy rules: shapes aligned at the right).
double broadcast_numel(const ShapeRecord& s, int a, int b) {
  const int nd = std::max<int>(s.ndim[a], s.ndim[b]);
  double n = 1;
  for (int k = 1; k <= nd; ++k) {
    const int64_t da = k <= s.ndim[a] ? s.dims[a][s.ndim[a] - k] : 1;
    const int64_t db = k <= s.ndim[b] ? s.dims[b][s.ndim[b] - k] : 1;
    n *= static_cast<double>(std::max(da, db));
  }
  return n;
}

double int_arg(const ShapeRecord& s, int i) {
  return s.scalar_type[i] == ShapeRecord::kIntArg && s.ndim[i] < 0 ? static_cast<double>(s.dims[i][0])
                                                                  : -1;
}

// Elements of the broadcast of tensors a, b and c.
double broadcast_numel3(const ShapeRecord& s, int a, int b, int c) {
  const int nd = std::max<int>({s.ndim[a], s.ndim[b], s.ndim[c]});
  double n = 1;
  for (int k = 1; k <= nd; ++k) {
    int64_t d = 1;
    for (int i : {a, b, c}) {
      if (k <= s.ndim[i]) d = std::max(d, s.dims[i][s.ndim[i] - k]);
    }
    n *= static_cast<double>(d);
  }
  return n;
}

// Masking, selection, dropout, concatenation, the loss and the embedding's backward.
std::optional<double> indexing_bytes(std::string_view op, const ShapeRecord& s) {
  const double e0 = tensor(s, 0) ? element_bytes(s.scalar_type[0]) : 0;
  if ((op == "aten::masked_fill_" || op == "aten::masked_fill") && tensor(s, 0) && tensor(s, 1)) {
    return 2 * bytes(s, 0) + bytes(s, 1);  // self read and written, the mask read
  }
  if (op == "aten::where" && tensor(s, 0) && tensor(s, 1)) {  // (cond, self, other)
    const double e = element_bytes(s.scalar_type[1]);
    if (!tensor(s, 2)) return bytes(s, 0) + bytes(s, 1) + broadcast_numel(s, 0, 1) * e;
    return bytes(s, 0) + bytes(s, 1) + bytes(s, 2) + broadcast_numel3(s, 0, 1, 2) * e;
  }
  if (op == "aten::native_dropout" && tensor(s, 0)) return 2 * bytes(s, 0) + numel(s, 0);  // + mask
  if (op == "aten::native_dropout_backward" && tensor(s, 0) && tensor(s, 1)) {
    return 2 * bytes(s, 0) + bytes(s, 1);  // grad and mask read, grad_input written
  }
  if (op == "aten::dropout" && tensor(s, 0)) return 2 * bytes(s, 0);
  if (op == "aten::bernoulli_" && tensor(s, 0)) return bytes(s, 0) + (tensor(s, 1) ? bytes(s, 1) : 0);
  if ((op == "aten::cat" || op == "aten::stack") && tensor(s, 0)) {
    if (s.ndim[ShapeRecord::kMaxInputs - 1] == ShapeRecord::kListCut) return std::nullopt;
    double in = 0;
    for (int i = 0; i < ShapeRecord::kMaxInputs; ++i) in += tensor(s, i) ? bytes(s, i) : 0;
    return 2 * in;  // every input read, the output (their sum) written
  }
  if (op == "aten::index_select" && tensor(s, 0) && tensor(s, 2)) {  // (self, dim, index)
    const double dim = int_arg(s, 1);
    if (dim < 0 || dim >= s.ndim[0] || s.dims[0][static_cast<int>(dim)] == 0) return std::nullopt;
    const double out = numel(s, 0) / static_cast<double>(s.dims[0][static_cast<int>(dim)]) * numel(s, 2);
    return bytes(s, 2) + 2 * out * e0;  // the index; the rows picked read, then written
  }
  if (op == "aten::index_add_" && tensor(s, 0) && tensor(s, 2) && tensor(s, 3)) {
    // (self, dim, index, source): source read, the rows of self it adds to read and written
    return bytes(s, 2) + bytes(s, 3) + 2 * std::min(bytes(s, 0), bytes(s, 3));
  }
  if ((op == "aten::embedding_dense_backward" || op == "aten::embedding_backward") &&
      tensor(s, 0) && tensor(s, 1)) {  // (grad, indices, num_weights, ...)
    const double rows = int_arg(s, 2), width = s.ndim[0] > 0 ? s.dims[0][s.ndim[0] - 1] : 0;
    return bytes(s, 0) + bytes(s, 1) + std::max(0.0, rows) * width * e0;  // + grad_weight written
  }
  if (op == "aten::nll_loss_forward" && tensor(s, 0) && tensor(s, 1)) {  // (self, target, ...)
    return bytes(s, 1) + numel(s, 1) * e0;  // the target and the one element it picks per row
  }
  if (op == "aten::nll_loss_backward" && tensor(s, 1) && tensor(s, 2)) {
    // (grad_output, self, target, ...): grad_input (self's shape) written, the target read
    return bytes(s, 1) + bytes(s, 2) + (tensor(s, 0) ? bytes(s, 0) : 0);
  }
  return std::nullopt;
}

// model.fused_norm's ops (bytes.h): the sum and the norm written, statistics per row.
std::optional<double> fused_norm_bytes(std::string_view op, const ShapeRecord& s) {
  const bool rms = op == kAddRmsNormOp || op == kAddRmsNormBackwardOp;
  const double stats_per_row = rms ? 4 : 8;  // fp32 rstd, and mean for LayerNorm
  if ((op == kAddLayerNormOp || op == kAddRmsNormOp) && tensor(s, 0) && tensor(s, 1) &&
      tensor(s, 2) && numel(s, 2) > 0) {
    const double n = numel(s, 0), rows = n / numel(s, 2);
    const double e_sum = std::max(element_bytes(s.scalar_type[0]), element_bytes(s.scalar_type[1]));
    const double e_norm = rms ? std::max<double>(e_sum, element_bytes(s.scalar_type[2])) : e_sum;
    return bytes(s, 0) + bytes(s, 1) + bytes(s, 2) + (tensor(s, 3) ? bytes(s, 3) : 0) +
           n * (e_sum + e_norm) + rows * stats_per_row;
  }
  if ((op == kAddLayerNormBackwardOp || op == kAddRmsNormBackwardOp) && tensor(s, 0) &&
      tensor(s, 2) && tensor(s, 3) && numel(s, 3) > 0) {
    const double rows = numel(s, 2) / numel(s, 3);
    const double read = bytes(s, 0) + (tensor(s, 1) ? bytes(s, 1) : 0) + bytes(s, 2) + bytes(s, 3) +
                        rows * stats_per_row;
    return read + bytes(s, 2) + (rms ? 1 : 2) * bytes(s, 3);  // d(input), d(weight) (, d(bias))
  }
  return std::nullopt;
}

bool is_fused_norm(std::string_view op) {
  return op == kAddLayerNormOp || op == kAddLayerNormBackwardOp || op == kAddRmsNormOp ||
         op == kAddRmsNormBackwardOp;
}

// model.fused_swiglu's ops (bytes.h).
std::optional<double> swiglu_bytes(std::string_view op, const ShapeRecord& s) {
  if (op == kSwigluOp && tensor(s, 0) && tensor(s, 1)) {
    const double e = std::max(element_bytes(s.scalar_type[0]), element_bytes(s.scalar_type[1]));
    return bytes(s, 0) + bytes(s, 1) + numel(s, 0) * e;
  }
  if (op == kSwigluBackwardOp && tensor(s, 0) && tensor(s, 1) && tensor(s, 2)) {
    return bytes(s, 0) + 2 * (bytes(s, 1) + bytes(s, 2));  // grad, gate, up read; two written
  }
  return std::nullopt;
}

bool is_indexing(std::string_view op) {
  static constexpr std::string_view kOps[] = {
      "aten::masked_fill_", "aten::masked_fill", "aten::where", "aten::native_dropout",
      "aten::native_dropout_backward", "aten::dropout", "aten::bernoulli_", "aten::cat",
      "aten::stack", "aten::index_select", "aten::index_add_", "aten::embedding_dense_backward",
      "aten::embedding_backward", "aten::nll_loss_forward", "aten::nll_loss_backward"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

}  // namespace

bool is_binary_elementwise(std::string_view op) {
  return op == "aten::add" || op == "aten::add_" || op == "aten::sub" || op == "aten::sub_" ||
         op == "aten::mul" || op == "aten::mul_" || op == "aten::div" || op == "aten::div_" ||
         op == "aten::threshold_backward" || op == "aten::tanh_backward";
}

bool is_view_op(std::string_view op) {
  static constexpr std::string_view kViews[] = {
      "aten::select",   "aten::as_strided",  "aten::view",        "aten::_unsafe_view",
      "aten::reshape",  "aten::_reshape_alias", "aten::expand",  "aten::expand_as",
      "aten::slice",    "aten::narrow",      "aten::t",           "aten::transpose",
      "aten::permute",  "aten::unsqueeze",   "aten::squeeze",     "aten::detach",
      "aten::alias",    "aten::split",       "aten::split_with_sizes", "aten::chunk",
      "aten::unbind",   "aten::view_as",     "aten::numpy_T",     "aten::resolve_conj",
      "aten::resolve_neg"};
  return std::find(std::begin(kViews), std::end(kViews), op) != std::end(kViews);
}

bool is_unary_elementwise(std::string_view op) {
  return op == "aten::sqrt" || op == "aten::sqrt_" || op == "aten::rsqrt" || op == "aten::exp" ||
         op == "aten::neg" || op == "aten::tanh" || op == "aten::relu" || op == "aten::relu_" ||
         op == "aten::sigmoid" || op == "aten::clone" || op == "aten::clamp" ||
         op == "aten::clamp_" || op == "aten::clamp_min" || op == "aten::clamp_max" ||
         op == "aten::reciprocal";
}

int element_bytes(int scalar_type) {
  switch (scalar_type) {  // c10::ScalarType values
    case 0:   // Byte
    case 1:   // Char
    case 11:  // Bool
      return 1;
    case 2:   // Short
    case 5:   // Half
    case 15:  // BFloat16
      return 2;
    case 3:  // Int
    case 6:  // Float
      return 4;
    case 4:  // Long
    case 7:  // Double
    case 9:  // ComplexFloat
      return 8;
    default:
      return 0;
  }
}

std::optional<double> op_bytes(std::string_view op, const ShapeRecord& s) {
  const double e0 = tensor(s, 0) ? element_bytes(s.scalar_type[0]) : 0;
  if (op == "aten::mm" && has(s, 0, 2) && has(s, 1, 2)) {
    return bytes(s, 0) + bytes(s, 1) + static_cast<double>(s.dims[0][0]) * s.dims[1][1] * e0;
  }
  if (op == "aten::addmm" && tensor(s, 0) && has(s, 1, 2) && has(s, 2, 2)) {
    const double e = element_bytes(s.scalar_type[1]);
    return bytes(s, 0) + bytes(s, 1) + bytes(s, 2) +
           static_cast<double>(s.dims[1][0]) * s.dims[2][1] * e;
  }
  if (op == "aten::bmm" && has(s, 0, 3) && has(s, 1, 3)) {
    return bytes(s, 0) + bytes(s, 1) +
           static_cast<double>(s.dims[0][0]) * s.dims[0][1] * s.dims[1][2] * e0;
  }
  if (op == "aten::baddbmm" && tensor(s, 0) && has(s, 1, 3) && has(s, 2, 3)) {
    const double e = element_bytes(s.scalar_type[1]);
    return bytes(s, 0) + bytes(s, 1) + bytes(s, 2) +
           static_cast<double>(s.dims[1][0]) * s.dims[1][1] * s.dims[2][2] * e;
  }
  if ((op == "aten::_softmax" || op == "aten::_log_softmax" || op == "aten::gelu") &&
      tensor(s, 0)) {
    return 2 * bytes(s, 0);
  }
  if ((op == "aten::_softmax_backward_data" || op == "aten::_log_softmax_backward_data" ||
       op == "aten::gelu_backward") &&
      tensor(s, 0) && tensor(s, 1)) {
    return bytes(s, 0) + bytes(s, 1) + bytes(s, 0);  // two read, one (grad_input) written
  }
  if (op == "aten::native_layer_norm" && tensor(s, 0)) {
    // Rows = elements / the normalized size (the weight's, else the last dimension).
    const double normalized =
        tensor(s, 2) ? numel(s, 2) : static_cast<double>(s.dims[0][std::max(0, s.ndim[0] - 1)]);
    const double rows = normalized > 0 ? numel(s, 0) / normalized : 0;
    double b = 2 * bytes(s, 0) + 2 * rows * 4;  // x in, y out; mean and rstd in fp32
    if (tensor(s, 2)) b += bytes(s, 2);
    if (tensor(s, 3)) b += bytes(s, 3);
    return b;
  }
  if (is_binary_elementwise(op) && tensor(s, 0)) {
    if (!tensor(s, 1)) return 2 * bytes(s, 0);  // a scalar other
    return bytes(s, 0) + bytes(s, 1) + broadcast_numel(s, 0, 1) * e0;
  }
  if (is_unary_elementwise(op) && tensor(s, 0)) return 2 * bytes(s, 0);
  if ((op == "aten::addcmul_" || op == "aten::addcdiv_" || op == "aten::lerp_") && tensor(s, 0) &&
      tensor(s, 1)) {
    return 2 * bytes(s, 0) + bytes(s, 1) + (tensor(s, 2) ? bytes(s, 2) : 0);  // self read + written
  }
  if ((op == "aten::fill_" || op == "aten::zero_") && tensor(s, 0)) return bytes(s, 0);
  if ((op == "aten::sum" || op == "aten::mean" || op == "aten::norm" ||
       op == "aten::linalg_vector_norm") &&
      tensor(s, 0)) {
    return bytes(s, 0);  // + a small output
  }
  if (op == "aten::copy_" && tensor(s, 0) && tensor(s, 1)) return bytes(s, 0) + bytes(s, 1);
  if (op == "aten::embedding" && has(s, 0, 2) && tensor(s, 1)) {
    const double rows = numel(s, 1), row_bytes = static_cast<double>(s.dims[0][1]) * e0;
    return bytes(s, 1) + 2 * rows * row_bytes;  // indices; rows read, then written
  }
  if (op == "aten::native_layer_norm_backward" && tensor(s, 0) && tensor(s, 1)) {
    // grad_out, input read, grad_input written; input 2 is normalized_shape, 3 the mean; rstd
    // and weight come after the four recorded inputs (left out: a lower bound).
    double b = 3 * bytes(s, 0);
    for (int i = 2; i < ShapeRecord::kMaxInputs; ++i) b += tensor(s, i) ? bytes(s, i) : 0;
    return b;
  }
  if (is_fused_norm(op)) return fused_norm_bytes(op, s);
  if (op == kSwigluOp || op == kSwigluBackwardOp) return swiglu_bytes(op, s);
  return indexing_bytes(op, s);
}

bool has_cost_model(std::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         op == "aten::_softmax" || op == "aten::_log_softmax" || op == "aten::gelu" ||
         op == "aten::_softmax_backward_data" || op == "aten::_log_softmax_backward_data" ||
         op == "aten::gelu_backward" || op == "aten::native_layer_norm" ||
         op == "aten::native_layer_norm_backward" || is_binary_elementwise(op) ||
         is_unary_elementwise(op) || op == "aten::addcmul_" || op == "aten::addcdiv_" ||
         op == "aten::lerp_" || op == "aten::fill_" || op == "aten::zero_" || op == "aten::sum" ||
         op == "aten::mean" || op == "aten::norm" || op == "aten::linalg_vector_norm" ||
         op == "aten::copy_" || op == "aten::embedding" || is_indexing(op) || is_fused_norm(op) ||
         op == kSwigluOp || op == kSwigluBackwardOp ||
         is_matmul_op(op);  // the fused attention ops too: their FLOPs need q's and k's shapes
}

}  // namespace llmprof::profile
