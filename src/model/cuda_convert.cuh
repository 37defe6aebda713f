// The element conversions the fused kernels share (fused_*.cu): fp32, bf16 and fp16 to fp32 and
// back, and round_to<T>, the rounding LibTorch's op in T applies to its fp32 result. Private to
// src/model; included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace llmprof::model::convert {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half(x);
}

// x as T holds it: the rounding LibTorch's op in T applies to its fp32 result.
template <typename T>
__device__ __forceinline__ float round_to(float x) {
  return to_float(from_float<T>(x));
}

}  // namespace llmprof::model::convert
