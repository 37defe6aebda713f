// The fused residual add + LayerNorm / RMSNorm kernels (see fused_add_norm.h), after llm.c's
// fused residual forward and layernorm backward. Per call on N rows of width C with the sum in
// s bytes and the delta in d bytes: the forward reads N*C*(s + d) and writes the sum and the
// norm once (LibTorch's add, then layer_norm: the sum written, then read again); the backward
// reads the norm's gradient, the residual's own gradient and the sum once and writes the input's
// gradient once, in which the residual's gradient is already added (LibTorch: layer_norm's
// backward, then autograd's accumulation of the two gradients of the sum, a separate pass).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_convert.cuh"
#include "fused_add_norm.h"

namespace llmprof::model {
namespace {

constexpr int kForwardThreads = 256;  // one warp per row: 8 rows per block
constexpr int kForwardRows = kForwardThreads / 32;
constexpr int kBackwardMaxThreads = 256;  // one block per row, blocks loop over the rows
constexpr int kBackwardBlocksPerSm = 4;
constexpr int kReduceColumns = 32, kReduceRows = 16;  // the partial sums' reduction block
constexpr int kVec = 4;                               // elements per load where aligned
constexpr int kDefaultSharedBytes = 48 * 1024;

using convert::from_float;
using convert::round_to;
using convert::to_float;

// The norm's output type: the sum's, or fp32 for RMSNorm with an fp32 weight (fused_add_norm.h).
template <bool Rms, typename TS, typename TW>
struct OutOf {
  using type = TS;
};
template <typename TS>
struct OutOf<true, TS, float> {
  using type = float;
};

template <typename T, int Vec>
struct alignas(sizeof(T) * Vec) Pack {
  T v[Vec];
};

// Pack i of a row (Vec elements) as fp32, and back.
template <typename T, int Vec>
__device__ __forceinline__ void load(const T* row, int i, float (&out)[Vec]) {
  const Pack<T, Vec> pack = reinterpret_cast<const Pack<T, Vec>*>(row)[i];
#pragma unroll
  for (int k = 0; k < Vec; ++k) out[k] = to_float(pack.v[k]);
}
template <typename T, int Vec>
__device__ __forceinline__ void store(T* row, int i, const float (&in)[Vec]) {
  Pack<T, Vec> pack;
#pragma unroll
  for (int k = 0; k < Vec; ++k) pack.v[k] = from_float<T>(in[k]);
  reinterpret_cast<Pack<T, Vec>*>(row)[i] = pack;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Every thread of the block ends with the block's sums of a and of b (a fixed order: the same
// bits on every run).
__device__ __forceinline__ void block_sum2(float& a, float& b) {
  __shared__ float shared_a[32], shared_b[32];
  a = warp_sum(a);
  b = warp_sum(b);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) {
    shared_a[warp] = a;
    shared_b[warp] = b;
  }
  __syncthreads();
  a = 0.0f;
  b = 0.0f;
  for (int w = 0; w < warps; ++w) {
    a += shared_a[w];
    b += shared_b[w];
  }
  __syncthreads();  // before the next row writes them again
}

// One warp per row: (1) sum = residual + delta rounded to TS, written, with the row's sum of x
// (LayerNorm) or of x^2 (RMSNorm); (2) LayerNorm only: the centred sum of squares over the sum
// read back (this thread's own writes, from L2), so var = E[(x - mean)^2] as LibTorch's Welford,
// never E[x^2] - mean^2; (3) the norm written.
template <bool Rms, typename TS, typename TD, typename TW, int Vec>
__global__ void __launch_bounds__(kForwardThreads)
    forward_kernel(const TS* __restrict__ residual,
                   const TD* __restrict__ delta,
                   const TW* __restrict__ weight,
                   const TW* __restrict__ bias,
                   TS* sum,
                   typename OutOf<Rms, TS, TW>::type* __restrict__ norm,
                   float* __restrict__ mean,
                   float* __restrict__ rstd,
                   int64_t rows,
                   int width,
                   float eps) {
  using TO = typename OutOf<Rms, TS, TW>::type;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kForwardRows + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32, packs = width / Vec;
  const int64_t offset = row * width;
  TS* s = sum + offset;
  float acc = 0.0f;
  for (int i = lane; i < packs; i += 32) {
    float x[Vec], d[Vec];
    load<TS, Vec>(residual + offset, i, x);
    load<TD, Vec>(delta + offset, i, d);
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      x[k] = round_to<TS>(x[k] + d[k]);
      acc += Rms ? x[k] * x[k] : x[k];
    }
    store<TS, Vec>(s, i, x);
  }
  acc = warp_sum(acc);
  float mu = 0.0f, r;
  if (Rms) {
    r = rsqrtf(acc / width + eps);
  } else {
    mu = acc / width;
    float var = 0.0f;
    for (int i = lane; i < packs; i += 32) {
      float x[Vec];
      load<TS, Vec>(s, i, x);
#pragma unroll
      for (int k = 0; k < Vec; ++k) var += (x[k] - mu) * (x[k] - mu);
    }
    r = rsqrtf(warp_sum(var) / width + eps);
  }
  for (int i = lane; i < packs; i += 32) {
    float x[Vec], w[Vec], b[Vec] = {};
    load<TS, Vec>(s, i, x);
    load<TW, Vec>(weight, i, w);
    if (bias != nullptr) load<TW, Vec>(bias, i, b);
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      // RMSNorm as Hugging Face's: (x * rstd) in the sum's dtype, then times the weight.
      x[k] = Rms ? round_to<TS>(x[k] * r) * w[k] : (x[k] - mu) * r * w[k] + b[k];
    }
    store<TO, Vec>(norm + offset, i, x);
  }
  if (lane == 0) {
    if (!Rms) mean[row] = mu;
    rstd[row] = r;
  }
}

// One block per row, blocks striding over the rows. Thread t owns the columns of packs t,
// t + blockDim.x, ...: it alone adds to their weight and bias gradients in shared memory, so the
// partial sums need no atomics and come out in a fixed order.
template <bool Rms, typename TS, typename TD, typename TW, int Vec>
__global__ void __launch_bounds__(kBackwardMaxThreads)
    backward_kernel(const typename OutOf<Rms, TS, TW>::type* __restrict__ grad_norm,
                    const TS* __restrict__ grad_sum,
                    const TS* __restrict__ sum,
                    const TW* __restrict__ weight,
                    const float* __restrict__ mean,
                    const float* __restrict__ rstd,
                    TS* __restrict__ grad_input,
                    TD* __restrict__ grad_delta,
                    float* __restrict__ partial,
                    int64_t rows,
                    int width) {
  using TO = typename OutOf<Rms, TS, TW>::type;
  extern __shared__ float shared_grad[];  // this block's weight gradient, then bias gradient
  float* dw = shared_grad;
  float* db = shared_grad + width;
  const int packs = width / Vec;
  for (int i = threadIdx.x; i < packs; i += blockDim.x) {
    for (int k = 0; k < Vec; ++k) dw[i * Vec + k] = db[i * Vec + k] = 0.0f;
  }
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t offset = row * width;
    const float mu = Rms ? 0.0f : mean[row], r = rstd[row];
    float sum_g = 0.0f, sum_gx = 0.0f;  // sums of g = grad_norm * weight and of g * xhat
    for (int i = threadIdx.x; i < packs; i += blockDim.x) {
      float dn[Vec], x[Vec], w[Vec];
      load<TO, Vec>(grad_norm + offset, i, dn);
      load<TS, Vec>(sum + offset, i, x);
      load<TW, Vec>(weight, i, w);
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        const float g = dn[k] * w[k];
        sum_g += g;
        sum_gx += g * (x[k] - mu) * r;
      }
    }
    block_sum2(sum_g, sum_gx);
    const float mean_g = Rms ? 0.0f : sum_g / width, mean_gx = sum_gx / width;
    for (int i = threadIdx.x; i < packs; i += blockDim.x) {
      float dn[Vec], x[Vec], w[Vec], dx[Vec] = {};
      load<TO, Vec>(grad_norm + offset, i, dn);
      load<TS, Vec>(sum + offset, i, x);
      load<TW, Vec>(weight, i, w);
      if (grad_sum != nullptr) load<TS, Vec>(grad_sum + offset, i, dx);
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        const float xhat = (x[k] - mu) * r;
        dx[k] += r * (dn[k] * w[k] - mean_g - xhat * mean_gx);
        dw[i * Vec + k] += dn[k] * (Rms ? round_to<TS>(xhat) : xhat);
        if (!Rms) db[i * Vec + k] += dn[k];
      }
      store<TS, Vec>(grad_input + offset, i, dx);
      if (grad_delta != nullptr) store<TD, Vec>(grad_delta + offset, i, dx);
    }
  }
  float* pw = partial + static_cast<int64_t>(blockIdx.x) * width;
  float* pb = partial + static_cast<int64_t>(gridDim.x + blockIdx.x) * width;
  for (int i = threadIdx.x; i < packs; i += blockDim.x) {
    for (int k = 0; k < Vec; ++k) {
      pw[i * Vec + k] = dw[i * Vec + k];
      if (!Rms) pb[i * Vec + k] = db[i * Vec + k];
    }
  }
}

// grad_weight[c] = sum over the blocks of partial[b][c] (blockIdx.y 0), grad_bias from the second
// half (blockIdx.y 1). A block takes 32 columns; its 16 rows of threads stride over the blocks'
// rows and meet in shared memory, in a fixed order.
template <typename TW>
__global__ void __launch_bounds__(kReduceColumns* kReduceRows)
    reduce_kernel(const float* __restrict__ partial,
                  int blocks,
                  int width,
                  TW* __restrict__ grad_weight,
                  TW* __restrict__ grad_bias) {
  __shared__ float shared[kReduceRows][kReduceColumns];
  const int c = blockIdx.x * kReduceColumns + threadIdx.x;
  const float* p = partial + static_cast<int64_t>(blockIdx.y) * blocks * width;
  float s = 0.0f;
  if (c < width) {
    for (int b = threadIdx.y; b < blocks; b += kReduceRows) {
      s += p[static_cast<int64_t>(b) * width + c];
    }
  }
  shared[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || c >= width) return;
  for (int y = 1; y < kReduceRows; ++y) s += shared[y][threadIdx.x];
  TW* out = blockIdx.y == 0 ? grad_weight : grad_bias;
  out[c] = from_float<TW>(s);
}

bool aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;  // null is aligned
}

const char* last_error() {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

template <bool Rms, typename TS, typename TD, typename TW>
const char* forward_typed(const AddNormForward& a, cudaStream_t stream) {
  using TO = typename OutOf<Rms, TS, TW>::type;
  const auto* x = static_cast<const TS*>(a.residual);
  const auto* d = static_cast<const TD*>(a.delta);
  const auto* w = static_cast<const TW*>(a.weight);
  const auto* b = static_cast<const TW*>(a.bias);
  auto* s = static_cast<TS*>(a.sum);
  auto* n = static_cast<TO*>(a.norm);
  const int width = static_cast<int>(a.width);
  const int64_t blocks = (a.rows + kForwardRows - 1) / kForwardRows;
  const bool packed = width % kVec == 0 && aligned(x, sizeof(TS) * kVec) &&
                      aligned(d, sizeof(TD) * kVec) && aligned(w, sizeof(TW) * kVec) &&
                      aligned(b, sizeof(TW) * kVec) && aligned(s, sizeof(TS) * kVec) &&
                      aligned(n, sizeof(TO) * kVec);
  if (packed) {
    forward_kernel<Rms, TS, TD, TW, kVec><<<blocks, kForwardThreads, 0, stream>>>(
        x, d, w, b, s, n, a.mean, a.rstd, a.rows, width, a.eps);
  } else {
    forward_kernel<Rms, TS, TD, TW, 1><<<blocks, kForwardThreads, 0, stream>>>(
        x, d, w, b, s, n, a.mean, a.rstd, a.rows, width, a.eps);
  }
  return last_error();
}

template <bool Rms, typename TS, typename TD, typename TW, int Vec>
const char* backward_launch(const AddNormBackward& a, int blocks, cudaStream_t stream) {
  using TO = typename OutOf<Rms, TS, TW>::type;
  const int width = static_cast<int>(a.width), packs = width / Vec;
  const int threads = packs >= kBackwardMaxThreads ? kBackwardMaxThreads : (packs + 31) / 32 * 32;
  const size_t shared = 2 * static_cast<size_t>(width) * sizeof(float);
  auto kernel = backward_kernel<Rms, TS, TD, TW, Vec>;
  if (shared > kDefaultSharedBytes) {
    const cudaError_t err = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (err != cudaSuccess) return cudaGetErrorString(err);
  }
  kernel<<<blocks, threads, shared, stream>>>(
      static_cast<const TO*>(a.grad_norm), static_cast<const TS*>(a.grad_sum),
      static_cast<const TS*>(a.sum), static_cast<const TW*>(a.weight), a.mean, a.rstd,
      static_cast<TS*>(a.grad_input), static_cast<TD*>(a.grad_delta), a.partial, a.rows, width);
  return last_error();
}

template <bool Rms, typename TS, typename TD, typename TW>
const char* backward_typed(const AddNormBackward& a, int blocks, cudaStream_t stream) {
  using TO = typename OutOf<Rms, TS, TW>::type;
  const bool packed = a.width % kVec == 0 && aligned(a.grad_norm, sizeof(TO) * kVec) &&
                      aligned(a.grad_sum, sizeof(TS) * kVec) && aligned(a.sum, sizeof(TS) * kVec) &&
                      aligned(a.weight, sizeof(TW) * kVec) &&
                      aligned(a.grad_input, sizeof(TS) * kVec) &&
                      aligned(a.grad_delta, sizeof(TD) * kVec);
  const char* err = packed ? backward_launch<Rms, TS, TD, TW, kVec>(a, blocks, stream)
                           : backward_launch<Rms, TS, TD, TW, 1>(a, blocks, stream);
  if (err != nullptr) return err;
  const dim3 grid((a.width + kReduceColumns - 1) / kReduceColumns, a.grad_bias != nullptr ? 2 : 1);
  reduce_kernel<TW><<<grid, dim3(kReduceColumns, kReduceRows), 0, stream>>>(
      a.partial, blocks, static_cast<int>(a.width), static_cast<TW*>(a.grad_weight),
      static_cast<TW*>(a.grad_bias));
  return last_error();
}

template <typename T>
struct Tag {
  using type = T;
};

// f(Tag<TS>, Tag<TD>, Tag<TW>) for the dtypes add_norm_dtypes_supported takes.
template <typename F>
const char* with_types(NormDtype sum, NormDtype delta, NormDtype weight, F&& f) {
  using Bf16 = __nv_bfloat16;
  if (!add_norm_dtypes_supported(sum, delta, weight)) return "unsupported dtype combination";
  switch (sum) {
    case NormDtype::kFloat32:
      if (delta == NormDtype::kBFloat16) return f(Tag<float>{}, Tag<Bf16>{}, Tag<float>{});
      if (delta == NormDtype::kFloat16) return f(Tag<float>{}, Tag<__half>{}, Tag<float>{});
      return f(Tag<float>{}, Tag<float>{}, Tag<float>{});
    case NormDtype::kBFloat16:
      if (weight == NormDtype::kFloat32) return f(Tag<Bf16>{}, Tag<Bf16>{}, Tag<float>{});
      return f(Tag<Bf16>{}, Tag<Bf16>{}, Tag<Bf16>{});
    case NormDtype::kFloat16:
      if (weight == NormDtype::kFloat32) return f(Tag<__half>{}, Tag<__half>{}, Tag<float>{});
      return f(Tag<__half>{}, Tag<__half>{}, Tag<__half>{});
  }
  return "unknown dtype";
}

}  // namespace

const char* launch_add_norm_forward(const AddNormForward& a, void* stream) {
  if (a.rows == 0) return nullptr;
  if (a.width < 1 || a.width > kAddNormMaxWidth) return "row width out of the kernels' range";
  auto s = static_cast<cudaStream_t>(stream);
  return with_types(a.sum_dtype, a.delta_dtype, a.weight_dtype, [&](auto ts, auto td, auto tw) {
    using TS = typename decltype(ts)::type;
    using TD = typename decltype(td)::type;
    using TW = typename decltype(tw)::type;
    return a.rms ? forward_typed<true, TS, TD, TW>(a, s) : forward_typed<false, TS, TD, TW>(a, s);
  });
}

int64_t add_norm_backward_blocks(int64_t rows) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 0;
  }
  const int64_t blocks = static_cast<int64_t>(sms) * kBackwardBlocksPerSm;
  return rows < blocks ? rows : blocks;
}

const char* launch_add_norm_backward(const AddNormBackward& a, int64_t blocks, void* stream) {
  if (a.rows == 0) return nullptr;
  if (a.width < 1 || a.width > kAddNormMaxWidth) return "row width out of the kernels' range";
  if (blocks < 1 || blocks > (int64_t{1} << 30)) return "bad block count";
  auto s = static_cast<cudaStream_t>(stream);
  const int n = static_cast<int>(blocks);
  return with_types(a.sum_dtype, a.delta_dtype, a.weight_dtype, [&](auto ts, auto td, auto tw) {
    using TS = typename decltype(ts)::type;
    using TD = typename decltype(td)::type;
    using TW = typename decltype(tw)::type;
    return a.rms ? backward_typed<true, TS, TD, TW>(a, n, s)
                 : backward_typed<false, TS, TD, TW>(a, n, s);
  });
}

}  // namespace llmprof::model
