// FLOPs of one op from its recorded input shapes (op_flops, analysis.h): the compute side of the
// roofline and the counted FLOPs of ops.csv.
#include <algorithm>

#include "llmprof/profile/analysis.h"
#include "llmprof/profile/bytes.h"

namespace llmprof::profile {

namespace {

double numel(const ShapeRecord& s, int i) {
  if (s.ndim[i] < 0) return 0;
  double n = 1;
  for (int d = 0; d < s.ndim[i]; ++d) n *= static_cast<double>(s.dims[i][d]);
  return n;
}

bool has(const ShapeRecord& s, int i, int nd) { return s.ndim[i] == nd; }

// The fused attention kernels' ops (LibTorch 2.x, scaled_dot_product_attention on CUDA), forward
// and backward. Their inner ops (_flash_attention_forward, ...) and the composite
// aten::scaled_dot_product_attention above them are left unmodelled: counted once.
bool is_fused_attention(std::string_view op) {
  for (std::string_view base : {"aten::_scaled_dot_product_flash_attention",
                                "aten::_scaled_dot_product_efficient_attention",
                                "aten::_scaled_dot_product_cudnn_attention"}) {
    if (op.substr(0, base.size()) != base) continue;
    const std::string_view rest = op.substr(base.size());
    if (rest.empty() || rest == "_backward") return true;
  }
  return false;
}

}  // namespace

bool is_matmul_op(std::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         is_fused_attention(op);
}

std::optional<double> op_flops(std::string_view op, const ShapeRecord& s) {
  if (op == "aten::mm" && has(s, 0, 2) && has(s, 1, 2)) {
    return 2.0 * s.dims[0][0] * s.dims[0][1] * s.dims[1][1];
  }
  if (op == "aten::addmm" && has(s, 1, 2) && has(s, 2, 2)) {
    return 2.0 * s.dims[1][0] * s.dims[1][1] * s.dims[2][1];
  }
  if (op == "aten::bmm" && has(s, 0, 3) && has(s, 1, 3)) {
    return 2.0 * s.dims[0][0] * s.dims[0][1] * s.dims[0][2] * s.dims[1][2];
  }
  if (op == "aten::baddbmm" && has(s, 1, 3) && has(s, 2, 3)) {
    return 2.0 * s.dims[1][0] * s.dims[1][1] * s.dims[1][2] * s.dims[2][2];
  }
  // Fused attention, torch.utils.flop_counter's count: forward Q K^T and P V, 2 matmuls of
  // 2*B*H*T*S*D each (causal masking not discounted); backward recomputes the scores and forms
  // dV, dP, dQ, dK: 5 such matmuls. Forward inputs (q, k, v), backward (grad_out, q, k, v).
  if (is_fused_attention(op)) {
    const bool backward = op.size() > 9 && op.substr(op.size() - 9) == "_backward";
    const int q = backward ? 1 : 0, k = q + 1;
    if (!has(s, q, 4) || !has(s, k, 4)) return std::nullopt;
    const double bhtsd = static_cast<double>(s.dims[q][0]) * s.dims[q][1] * s.dims[q][2] *
                         s.dims[k][2] * s.dims[q][3];
    return (backward ? 10.0 : 4.0) * bhtsd;
  }
  // add and mul: one FLOP per output element, torch.profiler's convention for them.
  if ((op == "aten::add" || op == "aten::add_" || op == "aten::mul" || op == "aten::mul_") &&
      s.ndim[0] >= 0) {
    if (s.ndim[1] < 0) return numel(s, 0);
    const int nd = std::max<int>(s.ndim[0], s.ndim[1]);
    double out = 1;
    for (int k = 1; k <= nd; ++k) {
      const int64_t a = k <= s.ndim[0] ? s.dims[0][s.ndim[0] - k] : 1;
      const int64_t b = k <= s.ndim[1] ? s.dims[1][s.ndim[1] - k] : 1;
      out *= static_cast<double>(std::max(a, b));
    }
    return out;
  }
  double per_element = 0, factor = 1;
  std::string_view base = op;
  if (base.size() > 9 && base.substr(base.size() - 9) == "_backward") {
    base = base.substr(0, base.size() - 9);
    factor = 2;
  } else if (base.size() > 14 && base.substr(base.size() - 14) == "_backward_data") {
    base = base.substr(0, base.size() - 14);
    factor = 2;
  }
  if (base == "aten::_softmax" || base == "aten::_log_softmax") per_element = 5;
  if (base == "aten::native_layer_norm") per_element = 5;
  if (base == "aten::gelu") per_element = 8;
  // model.fused_norm: the norm's count plus the add's one (RMSNorm: square, mean, scale, weight).
  if (base == kAddLayerNormOp) per_element = 6;
  if (base == kAddRmsNormOp) per_element = 5;
  if (base == kSwigluOp) per_element = 5;  // silu's exp, add and divide, the product
  if (per_element == 0 || s.ndim[0] < 0) return std::nullopt;
  return factor * per_element * numel(s, 0);
}

}  // namespace llmprof::profile
