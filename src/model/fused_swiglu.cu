// The fused SwiGLU gate (see fused_swiglu.h): h = silu(gate) * up in one pass. Per call on n
// elements of b bytes: the forward reads gate and up and writes h (3 n b; LibTorch's silu then
// mul: 5 n b, and silu's output kept for the backward); the backward reads grad_h, gate and up
// and writes both gradients (5 n b; LibTorch's mul backward and silu_backward: 9 n b).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_convert.cuh"
#include "fused_swiglu.h"

namespace llmprof::model {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 65535;

using convert::from_float;
using convert::round_to;
using convert::to_float;

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
// As LibTorch's silu kernel: x / (1 + exp(-x)), in fp32.
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

template <typename T, int Vec>
struct alignas(sizeof(T) * Vec) Pack {
  T v[Vec];
};

// Element i (of pack p: Vec elements) through f(gate, up) -> out, for all n elements: packs by
// a grid-stride loop, then the tail (n % Vec) one element each.
template <typename T, int Vec>
__global__ void __launch_bounds__(kThreads) forward_kernel(const T* __restrict__ gate,
                                                           const T* __restrict__ up,
                                                           T* __restrict__ out,
                                                           int64_t n) {
  const int64_t packs = n / Vec, stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t p = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; p < packs;
       p += stride) {
    const Pack<T, Vec> g = reinterpret_cast<const Pack<T, Vec>*>(gate)[p];
    const Pack<T, Vec> u = reinterpret_cast<const Pack<T, Vec>*>(up)[p];
    Pack<T, Vec> o;
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      const float x = to_float(g.v[k]);
      o.v[k] = from_float<T>(round_to<T>(silu(x)) * to_float(u.v[k]));
    }
    reinterpret_cast<Pack<T, Vec>*>(out)[p] = o;
  }
  for (int64_t i = packs * Vec + blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; i < n;
       i += stride) {
    const float x = to_float(gate[i]);
    out[i] = from_float<T>(round_to<T>(silu(x)) * to_float(up[i]));
  }
}

// One element's gradients (see fused_swiglu.h).
template <typename T>
__device__ __forceinline__ void swiglu_grad(float dh, float g, float u, T& dg, T& du) {
  const float sg = sigmoid(g);
  du = from_float<T>(dh * round_to<T>(silu(g)));
  dg = from_float<T>(round_to<T>(dh * u) * sg * (1.0f + g * (1.0f - sg)));
}

template <typename T, int Vec>
__global__ void __launch_bounds__(kThreads) backward_kernel(const T* __restrict__ grad_out,
                                                            const T* __restrict__ gate,
                                                            const T* __restrict__ up,
                                                            T* __restrict__ grad_gate,
                                                            T* __restrict__ grad_up,
                                                            int64_t n) {
  const int64_t packs = n / Vec, stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t p = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; p < packs;
       p += stride) {
    const Pack<T, Vec> dh = reinterpret_cast<const Pack<T, Vec>*>(grad_out)[p];
    const Pack<T, Vec> g = reinterpret_cast<const Pack<T, Vec>*>(gate)[p];
    const Pack<T, Vec> u = reinterpret_cast<const Pack<T, Vec>*>(up)[p];
    Pack<T, Vec> dg, du;
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      swiglu_grad<T>(to_float(dh.v[k]), to_float(g.v[k]), to_float(u.v[k]), dg.v[k], du.v[k]);
    }
    reinterpret_cast<Pack<T, Vec>*>(grad_gate)[p] = dg;
    reinterpret_cast<Pack<T, Vec>*>(grad_up)[p] = du;
  }
  for (int64_t i = packs * Vec + blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; i < n;
       i += stride) {
    swiglu_grad<T>(to_float(grad_out[i]), to_float(gate[i]), to_float(up[i]), grad_gate[i],
                   grad_up[i]);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

const char* last_error() {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

int blocks_for(int64_t items) {
  const int64_t b = (items + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

template <typename T>
const char* forward_typed(
    const void* gate, const void* up, void* out, int64_t n, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const auto* g = static_cast<const T*>(gate);
  const auto* u = static_cast<const T*>(up);
  auto* o = static_cast<T*>(out);
  if (aligned16(g) && aligned16(u) && aligned16(o)) {
    forward_kernel<T, kVec><<<blocks_for(n / kVec + 1), kThreads, 0, stream>>>(g, u, o, n);
  } else {
    forward_kernel<T, 1><<<blocks_for(n), kThreads, 0, stream>>>(g, u, o, n);
  }
  return last_error();
}

template <typename T>
const char* backward_typed(const void* grad_out,
                           const void* gate,
                           const void* up,
                           void* grad_gate,
                           void* grad_up,
                           int64_t n,
                           cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const auto* dh = static_cast<const T*>(grad_out);
  const auto* g = static_cast<const T*>(gate);
  const auto* u = static_cast<const T*>(up);
  auto* dg = static_cast<T*>(grad_gate);
  auto* du = static_cast<T*>(grad_up);
  if (aligned16(dh) && aligned16(g) && aligned16(u) && aligned16(dg) && aligned16(du)) {
    backward_kernel<T, kVec>
        <<<blocks_for(n / kVec + 1), kThreads, 0, stream>>>(dh, g, u, dg, du, n);
  } else {
    backward_kernel<T, 1><<<blocks_for(n), kThreads, 0, stream>>>(dh, g, u, dg, du, n);
  }
  return last_error();
}

}  // namespace

const char* launch_swiglu_forward(
    NormDtype dtype, const void* gate, const void* up, void* out, int64_t n, void* stream) {
  if (n == 0) return nullptr;
  auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case NormDtype::kFloat32:
      return forward_typed<float>(gate, up, out, n, s);
    case NormDtype::kBFloat16:
      return forward_typed<__nv_bfloat16>(gate, up, out, n, s);
    case NormDtype::kFloat16:
      return forward_typed<__half>(gate, up, out, n, s);
  }
  return "unknown dtype";
}

const char* launch_swiglu_backward(NormDtype dtype,
                                   const void* grad_out,
                                   const void* gate,
                                   const void* up,
                                   void* grad_gate,
                                   void* grad_up,
                                   int64_t n,
                                   void* stream) {
  if (n == 0) return nullptr;
  auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case NormDtype::kFloat32:
      return backward_typed<float>(grad_out, gate, up, grad_gate, grad_up, n, s);
    case NormDtype::kBFloat16:
      return backward_typed<__nv_bfloat16>(grad_out, gate, up, grad_gate, grad_up, n, s);
    case NormDtype::kFloat16:
      return backward_typed<__half>(grad_out, gate, up, grad_gate, grad_up, n, s);
  }
  return "unknown dtype";
}

}  // namespace llmprof::model
