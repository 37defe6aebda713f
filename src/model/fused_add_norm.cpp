#include "fused_add_norm.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "fused_launch.h"
#include "llmprof/model/fused_norm.h"
#include "llmprof/profile/bytes.h"

#ifdef LLMPROF_FUSED_NORM_KERNELS
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace llmprof::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// h, the norm, mean (LayerNorm; undefined for RMSNorm) and rstd per row (fp32, (rows)).
struct NormOut {
  torch::Tensor h, norm, mean, rstd;
};

// ---------------------------------------------------------------------------------------------
// The LibTorch path: the same op in LibTorch ops, with the hand-written backward.

NormOut torch_forward(bool rms,
                      const torch::Tensor& residual,
                      const torch::Tensor& delta,
                      const torch::Tensor& weight,
                      const torch::Tensor& bias,
                      double eps) {
  NormOut o;
  o.h = residual + delta;
  if (rms) {  // as RmsNormImpl::forward (Hugging Face's LlamaRMSNorm)
    const torch::Tensor h32 = o.h.to(torch::kFloat);
    const torch::Tensor rstd = torch::rsqrt(h32.pow(2).mean(-1, /*keepdim=*/true) + eps);
    o.norm = weight * (h32 * rstd).to(o.h.scalar_type());
    o.rstd = rstd.reshape({-1});
    return o;
  }
  auto [norm, mean, rstd] = at::native_layer_norm(o.h, {weight.size(0)}, weight, bias, eps);
  o.norm = norm;
  o.mean = mean.reshape({-1}).to(torch::kFloat);
  o.rstd = rstd.reshape({-1}).to(torch::kFloat);
  return o;
}

// d(h) (h's dtype and shape), d(weight), d(bias) from the saved h, mean and rstd (see
// launch_add_norm_backward for the formulas), in fp32 then cast.
tensor_list torch_backward(bool rms,
                           const torch::Tensor& grad_norm,
                           const torch::Tensor& grad_h,
                           const torch::Tensor& h,
                           const torch::Tensor& weight,
                           const torch::Tensor& bias,
                           const torch::Tensor& mean,
                           const torch::Tensor& rstd) {
  const int64_t C = h.size(-1);
  const torch::Tensor x = h.reshape({-1, C}).to(torch::kFloat);
  const torch::Tensor dn = grad_norm.reshape({-1, C}).to(torch::kFloat);
  const torch::Tensor r = rstd.reshape({-1, 1});
  const torch::Tensor xhat = rms ? x * r : (x - mean.reshape({-1, 1})) * r;  // (rows, C)
  const torch::Tensor g = dn * weight.to(torch::kFloat);
  const torch::Tensor mean_gx = (g * xhat).mean(-1, /*keepdim=*/true);
  torch::Tensor dx =
      rms ? r * (g - xhat * mean_gx) : r * (g - g.mean(-1, /*keepdim=*/true) - xhat * mean_gx);
  if (grad_h.defined()) dx = dx + grad_h.reshape({-1, C}).to(torch::kFloat);
  // RMSNorm's forward multiplied the weight by xhat rounded to h's dtype.
  const torch::Tensor scaled = rms ? xhat.to(h.scalar_type()).to(torch::kFloat) : xhat;
  torch::Tensor dw = (dn * scaled).sum(0).to(weight.scalar_type());
  torch::Tensor db = bias.defined() ? dn.sum(0).to(bias.scalar_type()) : torch::Tensor();
  return {dx.to(h.scalar_type()).view(h.sizes()), dw, db};
}

// ---------------------------------------------------------------------------------------------
// The CUDA kernels

// Whether this call takes the kernels: a build with them, CUDA tensors on one device, dtypes
// add_norm_dtypes_supported takes, rows no wider than kAddNormMaxWidth.
bool takes_kernels(const torch::Tensor& residual,
                   const torch::Tensor& delta,
                   const torch::Tensor& weight,
                   const torch::Tensor& bias) {
#ifdef LLMPROF_FUSED_NORM_KERNELS
  const auto device = residual.device();
  if (!residual.is_cuda() || delta.device() != device || weight.device() != device ||
      (bias.defined() && (bias.device() != device || bias.scalar_type() != weight.scalar_type())) ||
      weight.size(0) > kAddNormMaxWidth) {
    return false;
  }
  const auto s = kernel_dtype(c10::promoteTypes(residual.scalar_type(), delta.scalar_type()));
  const auto r = kernel_dtype(residual.scalar_type()), d = kernel_dtype(delta.scalar_type());
  const auto w = kernel_dtype(weight.scalar_type());
  if (!s || !r || !d || !w) return false;
  return add_norm_dtypes_supported(*s, *r == *s ? *d : *r, *w);
#else
  (void)residual, (void)delta, (void)weight, (void)bias;
  return false;
#endif
}

#ifdef LLMPROF_FUSED_NORM_KERNELS

const char* op_name(bool rms) { return rms ? "add_rms_norm" : "add_layer_norm"; }

NormOut kernel_forward(bool rms,
                       const torch::Tensor& residual,
                       const torch::Tensor& delta,
                       const torch::Tensor& weight,
                       const torch::Tensor& bias,
                       double eps) {
  const c10::cuda::CUDAGuard device_guard(residual.device());
  const auto sum_type = c10::promoteTypes(residual.scalar_type(), delta.scalar_type());
  // The addend in the sum's dtype goes first (an fp32 stream plus a bf16 layer output).
  const bool swap = residual.scalar_type() != sum_type;
  const torch::Tensor x = (swap ? delta : residual).contiguous();
  const torch::Tensor d = (swap ? residual : delta).contiguous();
  const torch::Tensor w = weight.contiguous();
  const torch::Tensor b = bias.defined() ? bias.contiguous() : torch::Tensor();
  AddNormForward a;
  a.rms = rms;
  a.sum_dtype = *kernel_dtype(sum_type);
  a.delta_dtype = *kernel_dtype(d.scalar_type());
  a.weight_dtype = *kernel_dtype(w.scalar_type());
  const NormDtype out_dtype = add_norm_out_dtype(rms, a.sum_dtype, a.weight_dtype);
  NormOut o;
  o.h = torch::empty(x.sizes(), x.options());
  o.norm = torch::empty(
      x.sizes(), x.options().dtype(out_dtype == NormDtype::kFloat32 ? torch::kFloat : sum_type));
  a.width = w.numel();
  a.rows = a.width > 0 ? x.numel() / a.width : 0;
  const auto f32 = x.options().dtype(torch::kFloat);
  o.rstd = torch::empty({a.rows}, f32);
  if (!rms) o.mean = torch::empty({a.rows}, f32);
  a.residual = x.data_ptr();
  a.delta = d.data_ptr();
  a.weight = w.data_ptr();
  a.bias = b.defined() ? b.data_ptr() : nullptr;
  a.sum = o.h.data_ptr();
  a.norm = o.norm.data_ptr();
  a.mean = rms ? nullptr : o.mean.data_ptr<float>();
  a.rstd = o.rstd.data_ptr<float>();
  a.eps = static_cast<float>(eps);
  check_launch(launch_add_norm_forward(a, c10::cuda::getCurrentCUDAStream().stream()), op_name(rms),
               "forward");
  return o;
}

// {d(h) in h's dtype, d(h) in delta_type or undefined when that is h's dtype, dw, db}.
tensor_list kernel_backward(bool rms,
                            const torch::Tensor& grad_norm,
                            const torch::Tensor& grad_h,
                            const torch::Tensor& h,
                            const torch::Tensor& weight,
                            const torch::Tensor& bias,
                            const torch::Tensor& mean,
                            const torch::Tensor& rstd,
                            c10::ScalarType delta_type) {
  const c10::cuda::CUDAGuard device_guard(h.device());
  AddNormBackward a;
  a.rms = rms;
  a.sum_dtype = *kernel_dtype(h.scalar_type());
  a.delta_dtype = *kernel_dtype(delta_type);
  a.weight_dtype = *kernel_dtype(weight.scalar_type());
  const bool out32 = add_norm_out_dtype(rms, a.sum_dtype, a.weight_dtype) == NormDtype::kFloat32;
  const torch::Tensor dn = grad_norm.to(out32 ? torch::kFloat : h.scalar_type()).contiguous();
  const torch::Tensor dh = grad_h.defined() ? grad_h.to(h.scalar_type()).contiguous() : grad_h;
  a.width = weight.numel();
  a.rows = h.numel() / a.width;
  const int64_t blocks = add_norm_backward_blocks(a.rows);
  if (a.rows > 0 && blocks < 1)
    check_launch("cannot read the device's multiprocessor count", op_name(rms), "backward");
  torch::Tensor dx = torch::empty(h.sizes(), h.options());
  torch::Tensor dd = delta_type != h.scalar_type()
                         ? torch::empty(h.sizes(), h.options().dtype(delta_type))
                         : torch::Tensor();
  torch::Tensor partial =
      torch::empty({2, std::max<int64_t>(blocks, 1), a.width}, h.options().dtype(torch::kFloat));
  const torch::Tensor w = weight.contiguous();
  torch::Tensor dw = torch::empty({a.width}, weight.options());
  torch::Tensor db = bias.defined() ? torch::empty({a.width}, bias.options()) : torch::Tensor();
  a.grad_norm = dn.data_ptr();
  a.grad_sum = dh.defined() ? dh.data_ptr() : nullptr;
  a.sum = h.data_ptr();
  a.weight = w.data_ptr();
  a.mean = rms ? nullptr : mean.data_ptr<float>();
  a.rstd = rstd.data_ptr<float>();
  a.grad_input = dx.data_ptr();
  a.grad_delta = dd.defined() ? dd.data_ptr() : nullptr;
  a.partial = partial.data_ptr<float>();
  a.grad_weight = dw.data_ptr();
  a.grad_bias = db.defined() ? db.data_ptr() : nullptr;
  check_launch(launch_add_norm_backward(a, blocks, c10::cuda::getCurrentCUDAStream().stream()),
               op_name(rms), "backward");
  return {dx, dd, dw, db};
}

#endif  // LLMPROF_FUSED_NORM_KERNELS

// ---------------------------------------------------------------------------------------------
// The autograd function, one per norm (their backward nodes show by name in ops.csv:
// torch::autograd::CppNode<llmprof::model::AddLayerNormFunction>).

tensor_list add_norm_forward(AutogradContext* ctx,
                             bool rms,
                             const torch::Tensor& residual,
                             const torch::Tensor& delta,
                             const torch::Tensor& weight,
                             const torch::Tensor& bias,
                             double eps) {
  RECORD_FUNCTION(rms ? profile::kAddRmsNormOp : profile::kAddLayerNormOp,
                  std::vector<c10::IValue>({residual, delta, weight, bias}));
  const bool kernels = takes_kernels(residual, delta, weight, bias);
  NormOut o;
#ifdef LLMPROF_FUSED_NORM_KERNELS
  if (kernels) o = kernel_forward(rms, residual, delta, weight, bias, eps);
#endif
  if (!kernels) o = torch_forward(rms, residual, delta, weight, bias, eps);
  ctx->save_for_backward({o.h, weight, bias, o.mean, o.rstd});
  ctx->saved_data["kernels"] = kernels;
  ctx->saved_data["residual_type"] = static_cast<int64_t>(residual.scalar_type());
  ctx->saved_data["delta_type"] = static_cast<int64_t>(delta.scalar_type());
  return {o.h, o.norm};
}

tensor_list add_norm_backward(AutogradContext* ctx, bool rms, const tensor_list& grads) {
  const auto saved = ctx->get_saved_variables();
  const torch::Tensor &h = saved[0], &weight = saved[1], &bias = saved[2], &mean = saved[3],
                      &rstd = saved[4];
  const torch::Tensor &grad_h = grads[0], &grad_norm = grads[1];
  RECORD_FUNCTION(rms ? profile::kAddRmsNormBackwardOp : profile::kAddLayerNormBackwardOp,
                  std::vector<c10::IValue>({grad_norm, grad_h, h, weight}));
  const auto residual_type = static_cast<c10::ScalarType>(ctx->saved_data["residual_type"].toInt());
  const auto delta_type = static_cast<c10::ScalarType>(ctx->saved_data["delta_type"].toInt());
  if (!grad_norm.defined())
    return {grad_h, grad_h, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  tensor_list g;  // {d(h), d(h) in the narrower addend's dtype or undefined, dw, db}
#ifdef LLMPROF_FUSED_NORM_KERNELS
  if (ctx->saved_data["kernels"].toBool()) {
    const auto narrow = residual_type != h.scalar_type() ? residual_type : delta_type;
    g = kernel_backward(rms, grad_norm, grad_h, h, weight, bias, mean, rstd, narrow);
  }
#endif
  if (g.empty()) {
    g = torch_backward(rms, grad_norm, grad_h, h, weight, bias, mean, rstd);
    g.insert(g.begin() + 1, torch::Tensor());
  }
  // Both addends get d(h); autograd casts a gradient to its input's dtype where the kernel did not.
  const torch::Tensor narrow = g[1].defined() ? g[1] : g[0];
  return {residual_type == h.scalar_type() ? g[0] : narrow,
          delta_type == h.scalar_type() ? g[0] : narrow, g[2], g[3], torch::Tensor()};
}

void check_shapes(const char* op,
                  const torch::Tensor& residual,
                  const torch::Tensor& delta,
                  const torch::Tensor& weight,
                  const torch::Tensor& bias) {
  const bool ok = residual.dim() >= 1 && residual.sizes() == delta.sizes() && weight.dim() == 1 &&
                  weight.size(0) == residual.size(-1) &&
                  (!bias.defined() || bias.sizes() == weight.sizes());
  if (!ok) {
    throw std::invalid_argument(std::string("[") + op + "] expected residual and delta (..., C) " +
                                "of one shape, weight and bias (C); got " +
                                c10::str(residual.sizes()) + ", " + c10::str(delta.sizes()) + ", " +
                                c10::str(weight.sizes()) +
                                (bias.defined() ? ", " + c10::str(bias.sizes()) : ""));
  }
}

}  // namespace

// LibTorch 1.13's Function::apply takes no undefined tensor: a LayerNorm without bias passes an
// empty one (no storage), which stands for none.
struct AddLayerNormFunction : public torch::autograd::Function<AddLayerNormFunction> {
  static tensor_list forward(AutogradContext* ctx,
                             const torch::Tensor& residual,
                             const torch::Tensor& delta,
                             const torch::Tensor& weight,
                             const torch::Tensor& bias,
                             double eps) {
    const torch::Tensor b = bias.numel() > 0 ? bias : torch::Tensor();
    return add_norm_forward(ctx, /*rms=*/false, residual, delta, weight, b, eps);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    return add_norm_backward(ctx, /*rms=*/false, grads);
  }
};

struct AddRmsNormFunction : public torch::autograd::Function<AddRmsNormFunction> {
  static tensor_list forward(AutogradContext* ctx,
                             const torch::Tensor& residual,
                             const torch::Tensor& delta,
                             const torch::Tensor& weight,
                             double eps) {
    return add_norm_forward(ctx, /*rms=*/true, residual, delta, weight, torch::Tensor(), eps);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    tensor_list g = add_norm_backward(ctx, /*rms=*/true, grads);
    g.erase(g.begin() + 3);  // no bias input
    return g;
  }
};

#ifdef LLMPROF_FUSED_NORM_KERNELS
bool fused_norm_kernels_available() { return true; }
#else
bool fused_norm_kernels_available() { return false; }
#endif

std::pair<torch::Tensor, torch::Tensor> add_layer_norm(const torch::Tensor& residual,
                                                       const torch::Tensor& delta,
                                                       const torch::Tensor& weight,
                                                       const torch::Tensor& bias,
                                                       double eps) {
  check_shapes("add_layer_norm", residual, delta, weight, bias);
  auto out = AddLayerNormFunction::apply(
      residual, delta, weight, bias.defined() ? bias : torch::empty({0}, weight.options()), eps);
  return {out[0], out[1]};
}

std::pair<torch::Tensor, torch::Tensor> add_rms_norm(const torch::Tensor& residual,
                                                     const torch::Tensor& delta,
                                                     const torch::Tensor& weight,
                                                     double eps) {
  check_shapes("add_rms_norm", residual, delta, weight, torch::Tensor());
  auto out = AddRmsNormFunction::apply(residual, delta, weight, eps);
  return {out[0], out[1]};
}

}  // namespace llmprof::model
