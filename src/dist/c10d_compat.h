// Every LibTorch-version-dependent use of c10d, in one place. LibTorch 1.13 (Debian) has
// ProcessGroupGloo/NCCL as ProcessGroups and a Reducer taking per-bucket size limits; LibTorch 2.x
// splits a ProcessGroup from its Backends (Gloo/NCCL are Backends set per device type), and the
// Reducer's constructor lost the size limits and gained flags over the 2.x releases. Where the 2.x
// releases differ among themselves the choice is made by overload detection (std::is_constructible
// or expression SFINAE), so one source compiles against each. Private to src/dist.
#pragma once

#if LLMPROF_WITH_DIST

#include <chrono>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>
#if LLMPROF_DIST_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if LLMPROF_DIST_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <torch/version.h>

namespace llmprof::dist::compat {

using PgPtr = c10::intrusive_ptr<c10d::ProcessGroup>;
using StorePtr = c10::intrusive_ptr<c10d::Store>;

#if LLMPROF_DIST_GLOO
// createDeviceForHostname(host) in 1.13, (host, lazyInit) in late 2.x.
template <typename G>
auto gloo_device_for(const std::string& host, int) -> decltype(G::createDeviceForHostname(host, false)) {
  return G::createDeviceForHostname(host, false);
}
template <typename G>
auto gloo_device_for(const std::string& host, long) {
  return G::createDeviceForHostname(host);
}
#endif

#if TORCH_VERSION_MAJOR >= 2
// ProcessGroup(store, rank, size) in late 2.x; (store, rank, size, options) in 2.0-2.2.
template <typename P = c10d::ProcessGroup>
PgPtr make_frontend(const StorePtr& store, int rank, int size, const char* name,
                    std::chrono::milliseconds timeout) {
  if constexpr (std::is_constructible_v<P, StorePtr, int, int>) {
    (void)name;
    (void)timeout;
    return c10::make_intrusive<P>(store, rank, size);
  } else {
    return c10::make_intrusive<P>(store, rank, size,
                                  c10::make_intrusive<typename P::Options>(name, timeout));
  }
}
template <typename P>
auto set_default_backend(P& pg, typename P::BackendType type, int) -> decltype(pg.setDefaultBackend(type)) {
  return pg.setDefaultBackend(type);
}
template <typename P>
void set_default_backend(P&, typename P::BackendType, long) {}
#endif

#if LLMPROF_DIST_GLOO
// A CPU group over Gloo's TCP transport on `host`, with `threads` worker threads.
inline PgPtr make_gloo(const StorePtr& store, int rank, int size, const std::string& host,
                       std::chrono::milliseconds timeout, int threads) {
  using G = c10d::ProcessGroupGloo;
  auto options = G::Options::create(timeout);
  options->devices.push_back(gloo_device_for<G>(host, 0));
  options->threads = threads;
  auto gloo = c10::make_intrusive<G>(store, rank, size, options);
#if TORCH_VERSION_MAJOR >= 2
  auto pg = make_frontend(store, rank, size, "gloo", timeout);
  pg->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, gloo);
  set_default_backend(*pg, c10d::ProcessGroup::BackendType::GLOO, 0);
  return pg;
#else
  return gloo;
#endif
}
#endif

#if LLMPROF_DIST_NCCL
// A CUDA group over NCCL on `device` (made current; < 0: the current one).
inline PgPtr make_nccl(const StorePtr& store, int rank, int size, int device,
                       std::chrono::milliseconds timeout) {
  using N = c10d::ProcessGroupNCCL;
  if (device >= 0) c10::cuda::set_device(static_cast<c10::DeviceIndex>(device));
  auto options = N::Options::create();
  options->timeout = timeout;
  auto nccl = c10::make_intrusive<N>(store, rank, size, options);
#if TORCH_VERSION_MAJOR >= 2
  auto pg = make_frontend(store, rank, size, "nccl", timeout);
  pg->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, nccl);
  set_default_backend(*pg, c10d::ProcessGroup::BackendType::NCCL, 0);
  return pg;
#else
  return nccl;
#endif
}
#endif

// c10d's Reducer with DDP's settings (find_unused_parameters = false, gradients copied into the
// buckets, not views). The constructor's signature by release:
//   1.13 .. early 2.x: (params, buckets, per_bucket_limits, pg, sparse, cap, find_unused,
//                       as_view, names, first_cap)
//   2.x:               (params, buckets, pg, sparse, cap, find_unused, as_view, names, first_cap
//                       [, skip_all_reduce_unused [, use_python_reducer [, cap_list]]])
// (A template so that only the matching branch is compiled.)
template <typename R = c10d::Reducer>
std::unique_ptr<R> make_reducer(std::vector<at::Tensor> params,
                                                   std::vector<std::vector<size_t>> buckets,
                                                   std::vector<size_t> limits, PgPtr pg,
                                                   int64_t cap_bytes, int64_t first_cap_bytes) {
  using Names = std::unordered_map<size_t, std::string>;
  using Buckets = std::vector<std::vector<size_t>>;
  using Tensors = std::vector<at::Tensor>;
  using Bools = std::vector<bool>;
  Bools sparse(params.size(), false);
  if constexpr (std::is_constructible_v<R, Tensors, Buckets, std::vector<size_t>, PgPtr, Bools,
                                        int64_t, bool, bool, Names, int64_t>) {
    return std::make_unique<R>(std::move(params), std::move(buckets), std::move(limits),
                               std::move(pg), sparse, cap_bytes, false, false, Names{},
                               first_cap_bytes);
  } else if constexpr (std::is_constructible_v<R, Tensors, Buckets, PgPtr, Bools, int64_t, bool,
                                               bool, Names, int64_t, bool, bool,
                                               std::vector<int64_t>>) {
    return std::make_unique<R>(std::move(params), std::move(buckets), std::move(pg), sparse,
                               cap_bytes, false, false, Names{}, first_cap_bytes, false, false,
                               std::vector<int64_t>{});
  } else if constexpr (std::is_constructible_v<R, Tensors, Buckets, PgPtr, Bools, int64_t, bool,
                                               bool, Names, int64_t, bool, bool>) {
    return std::make_unique<R>(std::move(params), std::move(buckets), std::move(pg), sparse,
                               cap_bytes, false, false, Names{}, first_cap_bytes, false, false);
  } else if constexpr (std::is_constructible_v<R, Tensors, Buckets, PgPtr, Bools, int64_t, bool,
                                               bool, Names, int64_t, bool>) {
    return std::make_unique<R>(std::move(params), std::move(buckets), std::move(pg), sparse,
                               cap_bytes, false, false, Names{}, first_cap_bytes, false);
  } else {
    return std::make_unique<R>(std::move(params), std::move(buckets), std::move(pg), sparse,
                               cap_bytes, false, false, Names{}, first_cap_bytes);
  }
}

// The message of a c10d/ATen exception without LibTorch's C++ backtrace.
inline std::string what_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

}  // namespace llmprof::dist::compat

#endif  // LLMPROF_WITH_DIST
