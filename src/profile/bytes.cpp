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
         op == "aten::sigmoid" || op == "aten::clone";
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
  if ((op == "aten::sum" || op == "aten::mean") && tensor(s, 0)) return bytes(s, 0);  // + a small output
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
  return std::nullopt;
}

bool has_cost_model(std::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         op == "aten::_softmax" || op == "aten::_log_softmax" || op == "aten::gelu" ||
         op == "aten::_softmax_backward_data" || op == "aten::_log_softmax_backward_data" ||
         op == "aten::gelu_backward" || op == "aten::native_layer_norm" ||
         op == "aten::native_layer_norm_backward" || is_binary_elementwise(op) ||
         is_unary_elementwise(op) || op == "aten::addcmul_" || op == "aten::addcdiv_" ||
         op == "aten::lerp_" || op == "aten::fill_" || op == "aten::zero_" || op == "aten::sum" ||
         op == "aten::mean" || op == "aten::copy_" || op == "aten::embedding" ||
         is_matmul_op(op);  // the fused attention ops too: their FLOPs need q's and k's shapes
}

}  // namespace llmprof::profile
